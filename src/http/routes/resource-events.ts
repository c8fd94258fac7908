import { Hono, type Context } from 'hono';
import { recordNotFound } from '../../domain/errors.js';
import type { ResourceEventKind, ResourceEventRecord } from '../../domain/resource-events.js';
import { resourceEventsOf, type ResourceType } from '../../projections/resource-events/queries.js';
import { resourceEventUsers, toResourceLabelEvent, toResourceMilestoneEvent, toResourceStateEvent, type ResourceContext } from '../entities/resource-events.js';
import { requireUser } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented } from '../kernel/documented.js';
import { paginateArray } from '../kernel/pagination.js';
import { userProject } from '../kernel/scope.js';
import { issueNoteables, mergeRequestNoteables, type NoteableKind } from './notes/noteables.js';

/**
 * GitLab 12's API::ResourceLabelEvents and GitLab 13's API::ResourceMilestoneEvents and
 * API::ResourceStateEvents on issues and merge requests: `find_noteable` (reading the issuable,
 * a confidential issue 404 to whom may not see it), the list paginated, one event by
 * `:event_id` (`eventable.resource_…_events.find`: 404 Not found). The records are a query
 * over the issuable's stream in the log (src/domain/resource-events.ts): no table.
 */

const KINDS: readonly { segment: string; kind: ResourceEventKind; entity: string }[] = [
  { segment: 'resource_label_events', kind: 'label', entity: 'ResourceLabelEvent' },
  { segment: 'resource_milestone_events', kind: 'milestone', entity: 'ResourceMilestoneEvent' },
  { segment: 'resource_state_events', kind: 'state', entity: 'ResourceStateEvent' },
];

/** The issuable's events of a kind, each presented as its entity, oldest first. */
async function presented(c: Context, issuable: Issuable, kind: ResourceEventKind, only?: (r: ResourceEventRecord) => boolean) {
  // `before { authenticate! }`: even a public project's events ask for a user.
  const auth = await requireUser(c);
  const project = await userProject(c, auth);
  // NotesHelpers#find_noteable, as the notes routes ask it.
  const noteable = await issuable.noteables.find(c, auth, issuable.idParam);
  const id = noteable.data.noteable_id!;
  const { db, config } = appContext(c);
  const { records, labels, milestones } = await resourceEventsOf(db, issuable.type, id, kind);
  const chosen = only ? records.filter(only) : records;
  const ctx: ResourceContext = { type: issuable.type, id, projectPath: project.row.path_with_namespace, users: await resourceEventUsers(db, chosen), config };
  return chosen.map((r) => (r.kind === 'label' ? toResourceLabelEvent(r, labels, ctx) : r.kind === 'milestone' ? toResourceMilestoneEvent(r, milestones, ctx) : toResourceStateEvent(r, ctx)));
}

interface Issuable {
  readonly type: ResourceType;
  readonly noteables: NoteableKind;
  readonly collection: 'issues' | 'merge_requests';
  readonly idParam: 'issue_iid' | 'merge_request_iid';
}

const ISSUABLES: readonly Issuable[] = [
  { type: 'Issue', noteables: issueNoteables, collection: 'issues', idParam: 'issue_iid' },
  { type: 'MergeRequest', noteables: mergeRequestNoteables, collection: 'merge_requests', idParam: 'merge_request_iid' },
];

function routesOf(issuable: Issuable) {
  const path = (tail: string) => `/projects/:id/${issuable.collection}/:${issuable.idParam}/${tail}`;
  const app = new Hono<AppEnv>();
  const of = issuable.type === 'Issue' ? 'an issue' : 'a merge request';
  for (const { segment, kind, entity } of KINDS) {
    const what = `${kind} events`;
    app.get(path(segment), documented({ summary: `List the ${what} of ${of}`, responses: { 200: `${entity}[]`, 404: 'Error' } }), async (c) => c.json(await paginateArray(c, await presented(c, issuable, kind))));
    app.get(path(`${segment}/:event_id`), documented({ summary: `Get one of the ${what} of ${of}`, responses: { 200: entity, 404: 'Error' } }), async (c) => {
      const id = c.req.param('event_id');
      const [one] = await presented(c, issuable, kind, (r) => String(r.id) === id);
      if (!one) throw recordNotFound();
      return c.json(one);
    });
  }
  return app;
}

export const resourceEventRoutes = ISSUABLES.reduce((app, issuable) => app.route('/', routesOf(issuable)), new Hono<AppEnv>());
