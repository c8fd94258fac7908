import type { Config } from '../../config.js';
import type { IssueView } from '../../projections/issues/queries.js';
import { toIssue, type ReferenceContext } from './issues.js';

/** EE::API::Entities::RelatedIssue (12.10): IssueBasic and the link's id. */
export const toRelatedIssue = (view: IssueView, config: Config, issueLinkId: number, context: ReferenceContext) => ({
  ...toIssue(view, config, { basic: true, context }),
  issue_link_id: issueLinkId,
});

/** EE::API::Entities::IssueLink (12.10): both ends as IssueBasic. */
export const toIssueLink = (source: IssueView, target: IssueView, config: Config, context: ReferenceContext) => ({
  source_issue: toIssue(source, config, { basic: true, context }),
  target_issue: toIssue(target, config, { basic: true, context }),
});
