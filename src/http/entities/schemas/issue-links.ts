import { entity, extend, int, ref } from './dsl.js';
import { IssueBasic } from './issues.js';

export const RelatedIssue = extend(IssueBasic, 'Entities::RelatedIssue: IssueBasic and the link.', { issue_link_id: int });

export const IssueLink = entity('Entities::IssueLink.', { source_issue: ref('IssueBasic'), target_issue: ref('IssueBasic') });
