import { Hono, type Context } from 'hono';
import { addIssueToEpic, moveIssueInEpic, removeIssueFromEpic } from '../../commands/epic-issues.js';
import { conflict, recordNotFound, serviceNotFound } from '../../domain/errors.js';
import { can } from '../../domain/policy/can.js';
import { findEpicById, findEpicIssue, issuesOfEpic, type EpicView } from '../../projections/epics/queries.js';
import { canOnIssue, findIssueById, issueViews, isSubscribedTo, viewerSubjectsOn } from '../../projections/issues/queries.js';
import type { IssueRow } from '../../projections/issues/tables.js';
import { toEpic } from '../entities/epics.js';
import { toIssue } from '../entities/issues.js';
import { requireUser, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { routeNotFound } from '../kernel/errors.js';
import { declaration, integerCheck, optional, pathId, rawParams, t } from '../kernel/params.js';
import type { GroupScope } from '../kernel/scope.js';
import { epicOf, epicsGroup } from './epics.js';
import { epicFieldsOf } from './issues/find.js';

/**
 * EE's API::EpicIssues (GitLab 12.10, ultimate): an epic's issues, by `/groups/:id/epics/…` or
 * `/groups/:id/-/epics/…`. Every route authenticates (401), finds the group (404 when hidden)
 * and asks the plan (403 below ultimate), then parses its parameters and asks admin_epic
 * (read_epic for the list) of the epic, 403 for a missing one. The issue to add is named by its
 * global id in the path: `POST …/issues` with `issue_id` in the body matches no route (404).
 */

/** Entities::EpicIssue: Entities::Issue (with `subscribed`) and the link's id and position. */
async function presentEpicIssues(c: Context, group: GroupScope, epic: EpicView) {
  const { db, config } = appContext(c);
  const rows = await issuesOfEpic(db, epic.id);
  // Ability.issues_readable_by_user.
  const subjects = await viewerSubjectsOn(db, group.viewer, rows.map((r) => r.project_id));
  const readable = rows.filter((r) => {
    const subject = subjects.get(r.project_id);
    return subject !== undefined && canOnIssue(subject, r, 'read_issue');
  });
  const issueRows: IssueRow[] = readable.map(({ epic_issue_id: _id, epic_relative_position: _position, ...row }) => row);
  const views = await issueViews(db, issueRows);
  const epics = await epicFieldsOf(c, group.viewer, issueRows);
  const viewerId = group.viewer?.id ?? null;
  return Promise.all(
    views.map(async (view, i) => ({
      ...toIssue(view, config, { context: null, subscribed: await isSubscribedTo(db, view.row, viewerId), epic: epics.get(view.row.id) }),
      epic_issue_id: readable[i]!.epic_issue_id,
      relative_position: readable[i]!.epic_relative_position,
    })),
  );
}

/** Entities::EpicIssueLink: the link, its epic as Entities::Epic (no user: no admin fields), its issue as IssueBasic. */
async function presentLink(c: Context, link: { id: number; relative_position: number | null; epic_id: number }, issue: IssueRow) {
  const { db, config } = appContext(c);
  const epic = await findEpicById(db, null, link.epic_id);
  if (!epic) throw recordNotFound();
  const [view] = await issueViews(db, [issue]);
  return {
    id: link.id,
    relative_position: link.relative_position,
    epic: toEpic(epic, config, { canAdmin: false }),
    issue: toIssue(view!, config, { basic: true, context: null }),
  };
}

/** `epic.epic_issues.find(params[:epic_issue_id])`: a link of this epic, else "404 Not found". */
async function linkOf(c: Context, epic: EpicView) {
  const id = pathId(c, 'epic_issue_id');
  const link = id === null ? undefined : await findEpicIssue(appContext(c).db, epic.id, id);
  if (!link) throw recordNotFound();
  return link;
}

const moveShape = { move_before_id: optional(t.integer()), move_after_id: optional(t.integer()) };

/** `requires :epic_iid, type: Integer` (and `:epic_issue_id` where the path names a link). */
const ON_EPIC = { pathIds: ['epic_iid'] } as const;
const ON_LINK = { pathIds: ['epic_iid', 'epic_issue_id'] } as const;

async function declaredPath(c: Context, names: readonly string[]) {
  const p = declaration(await rawParams(c));
  for (const name of names) p.check(integerCheck(c, name));
  p.done();
}

const routes = new Hono<AppEnv>();
for (const base of ['/groups/:id/epics/:epic_iid/issues', '/groups/:id/-/epics/:epic_iid/issues']) {
  routes
    // GitLab's API ends in `route :any, '*path'` (404), which Grape prefers to a 405 for a path
    // known under another method: the issue named in the body instead of the path is that 404.
    .post(base, documented({ summary: 'Assign an issue to the epic: the issue is named in the path (…/issues/:issue_id); this path answers 404', auth: 'public', responses: { 404: 'Error' } }), () => {
      throw routeNotFound();
    })
    .get(base, documented({ summary: 'Get issues assigned to the epic', ...ON_EPIC, responses: { 200: 'EpicIssue[]', ...REFUSED } }), async (c) => {
      const auth = await requireUser(c);
      const group = await epicsGroup(c, auth);
      await declaredPath(c, ['epic_iid']);
      const epic = await epicOf(c, group, 'read_epic');
      // GitLab 12.10 presents the whole list, unpaginated.
      return c.json(await presentEpicIssues(c, group, epic));
    })

    .post(`${base}/:issue_id`, documented({ summary: 'Assign an issue to the epic', ...ON_EPIC, responses: { 201: 'EpicIssueLink', ...REFUSED, 409: 'Error' } }), async (c) => {
      const w = await requireWriter(c);
      const group = await epicsGroup(c, w.auth);
      await declaredPath(c, ['epic_iid']);
      const epic = await epicOf(c, group, 'admin_epic');
      const { db } = appContext(c);
      // `Issue.find(params[:issue_id])`.
      const issueId = pathId(c, 'issue_id');
      const issue = issueId === null ? undefined : await findIssueById(db, issueId);
      if (!issue) throw recordNotFound();
      // EpicIssues::CreateService: an issue in this epic already is a conflict; one outside the
      // epic's group and its subgroups (or one the caller may not read) is not linkable.
      const current = await db.selectFrom('epic_issues').select('epic_id').where('issue_id', '=', issue.id).executeTakeFirst();
      if (current?.epic_id === epic.id) throw conflict('Issue(s) already assigned');
      const project = await db.selectFrom('projects').innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id').select(['namespaces.kind', 'namespaces.traversal_ids']).where('projects.id', '=', issue.project_id).executeTakeFirst();
      const subject = (await viewerSubjectsOn(db, group.viewer, [issue.project_id])).get(issue.project_id);
      const linkable = project?.kind === 'group' && project.traversal_ids.includes(epic.group_id) && subject !== undefined && canOnIssue(subject, issue, 'read_issue');
      if (!linkable) throw serviceNotFound('No Issue found for given params');
      await addIssueToEpic(w, issue.id, epic);
      const link = (await db.selectFrom('epic_issues').selectAll().where('issue_id', '=', issue.id).executeTakeFirst())!;
      return c.json(await presentLink(c, link, issue), 201);
    })

    .put(`${base}/:epic_issue_id`, documented({ summary: 'Update epic issue association', params: moveShape, ...ON_LINK, responses: { 200: 'EpicIssue[]', ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const group = await epicsGroup(c, w.auth);
      const p = declaration(await rawParams(c));
      p.check(integerCheck(c, 'epic_iid'));
      p.check(integerCheck(c, 'epic_issue_id'));
      const moves = p.parse(moveShape);
      p.done();
      const epic = await epicOf(c, group, 'admin_epic');
      const link = await linkOf(c, epic);
      await moveIssueInEpic(w, epic.id, link.id, { before: moves.move_before_id, after: moves.move_after_id });
      return c.json(await presentEpicIssues(c, group, epic));
    })

    .delete(`${base}/:epic_issue_id`, documented({ summary: 'Remove an issue from the epic', ...ON_LINK, responses: { 200: 'EpicIssueLink', ...REFUSED } }), async (c) => {
      const w = await requireWriter(c);
      const group = await epicsGroup(c, w.auth);
      await declaredPath(c, ['epic_iid', 'epic_issue_id']);
      const epic = await epicOf(c, group, 'admin_epic');
      const link = await linkOf(c, epic);
      const { db } = appContext(c);
      const issue = await findIssueById(db, link.issue_id);
      // EpicIssues::DestroyService: admin_epic_issue on the issue (reporters of its project) and admin_epic on the epic.
      const subject = issue && (await viewerSubjectsOn(db, group.viewer, [issue.project_id])).get(issue.project_id);
      if (!issue || !subject || !can(subject, 'admin_epic_issue')) throw serviceNotFound('No Issue Link found');
      const body = await presentLink(c, link, issue);
      await removeIssueFromEpic(w, issue.id, epic.id);
      return c.json(body);
    });
}

export const epicIssueRoutes = routes;
