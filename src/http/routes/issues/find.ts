import type { Context } from 'hono';
import { run } from '../../../commands/kernel/run.js';
import { forbidden, notFound, recordNotFound } from '../../../domain/errors.js';
import { issues } from '../../../domain/issues/aggregate.js';
import { canOnIssue, findIssue, findIssueById, issueViews, isSubscribedTo } from '../../../projections/issues/queries.js';
import type { IssueRow } from '../../../projections/issues/tables.js';
import { toIssue } from '../../entities/issues.js';
import { appContext, today } from '../../kernel/context.js';
import type { Viewer } from '../../../domain/access.js';
import { licensed } from '../../../domain/policy/licensed.js';
import { epicsOfIssues } from '../../../projections/epics/queries.js';
import { issueEpicFields } from '../../entities/epics.js';
import { pathRow, type ProjectScope } from '../../kernel/scope.js';
import type { IssuableKind } from '../issuables/kind.js';

/** What every route under /projects/:id/issues/:issue_iid shares: finding the issue and presenting it. */

type IssueAbility = 'read_issue' | 'update_issue' | 'admin_issue' | 'destroy_issue';

/**
 * GitLab's `find_project_issue(iid)` (IssuesFinder: the issues feature and the
 * confidentiality rule applied) and then `authorize! ability`: 404 for an issue the caller
 * may not read — `{"message":"404 Not found"}`, or `notFoundAs` ("404 Issue Not Found" where
 * GitLab's route says `not_found!('Issue')`) — and 403 without the ability.
 */
export async function issueOf(c: Context, project: ProjectScope, ability: IssueAbility = 'read_issue', notFoundAs: 'record' | 'Issue' = 'record'): Promise<IssueRow> {
  const missing = () => (notFoundAs === 'record' ? recordNotFound() : notFound('Issue'));
  const row = await pathRow(c, 'issue_iid', (db, iid) => findIssue(db, project.row.id, iid), missing);
  if (!canOnIssue(project.subject, row, 'read_issue')) throw missing();
  if (!canOnIssue(project.subject, row, ability)) throw forbidden();
  return row;
}

/** EE's `epic_iid` / `epic` of each issue the viewer sees them on (ultimate): by issue id, absent where not shown. */
export async function epicFieldsOf(c: Context, viewer: Viewer | null, rows: readonly IssueRow[]): Promise<Map<number, ReturnType<typeof issueEpicFields>>> {
  const { db, config } = appContext(c);
  if (!licensed(config.plan, 'epics')) return new Map();
  const day = today(c);
  return new Map([...(await epicsOfIssues(db, viewer, rows))].map(([id, epic]) => [id, issueEpicFields(epic, day)]));
}

/** Entities::Issue of a row, the single view (`subscribed` for the caller). */
export async function presentIssue(c: Context, project: ProjectScope, row: IssueRow, subscribed?: boolean) {
  const { db, config } = appContext(c);
  const [view] = await issueViews(db, [row], new Map([[project.row.id, project.row.path_with_namespace]]));
  const isSubscribed = subscribed ?? (await isSubscribedTo(db, row, project.viewer?.id ?? null));
  const epic = (await epicFieldsOf(c, project.viewer, [row])).get(row.id);
  return toIssue(view!, config, { subscribed: isSubscribed, context: { projectId: project.row.id, projectPath: project.row.path_with_namespace }, epic });
}

/** The single view of an issue read again by id (after a command). */
export async function presentIssueById(c: Context, project: ProjectScope, id: number) {
  const row = await findIssueById(appContext(c).db, id);
  if (!row) throw recordNotFound();
  return presentIssue(c, project, row);
}

/**
 * Issues for the endpoints they share with merge requests (src/http/routes/issuables/):
 * subscriptions and todos ask to read the issue (`find_project_issue`), time tracking admin_issue.
 */
export const ISSUE_KIND: IssuableKind<IssueRow> = {
  collection: 'issues',
  iidParam: 'issue_iid',
  todoType: 'Issue',
  find: (c, project, access) => issueOf(c, project, access === 'admin' ? 'admin_issue' : 'read_issue'),
  findById: findIssueById,
  run: (w, id, command) => run(w, issues, id, command),
  present: presentIssue,
};
