import type { Config } from '../../config.js';
import type { Db } from '../../database/database.js';
import type { Viewer } from '../../domain/access.js';
import { findEpicsByIds } from '../../projections/epics/queries.js';
import { mergeableBy, mergeRequestViews, subscribedAmong } from '../../projections/merge-requests/queries.js';
import type { TodoView } from '../../projections/todos/queries.js';
import { canAdminEpic, epicWebPath, toEpic } from './epics.js';
import { toMergeRequest } from './merge-requests.js';
import { issueViews, isSubscribedTo } from '../../projections/issues/queries.js';
import { toIssue } from './issues.js';
import { iso, toUserBasic } from './users.js';

/** Entities::NamespaceBasic as a todo embeds its group. */
const groupOf = (row: TodoView) => ({ id: row.group_id, name: row.group_name, path: row.group_path, kind: 'group', full_path: row.group_full_path, parent_id: row.group_parent_id });

/** A todo's target as Entities::Todo shows it: its entity, its URL and the todo's body (the target's title). */
interface Target {
  readonly entity: unknown;
  readonly url: string;
  readonly title: string;
}

async function epicTargets(db: Db, config: Config, viewer: Viewer | null, ids: readonly number[]): Promise<Map<number, Target>> {
  const epics = await findEpicsByIds(db, viewer, ids);
  return new Map(
    epics.map((epic) => [
      epic.id,
      { entity: toEpic(epic, config, { canAdmin: canAdminEpic(viewer, epic) }), url: `${config.externalUrl}${epicWebPath(epic.group_full_path, epic.iid)}`, title: epic.title },
    ]),
  );
}

/** Merge requests as Entities::MergeRequest (the full one, `subscribed` and `user.can_merge` for the caller). */
async function mergeRequestTargets(db: Db, config: Config, viewer: Viewer | null, ids: readonly number[]): Promise<Map<number, Target>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('merge_requests').selectAll().where('id', 'in', [...new Set(ids)]).execute();
  const targets = new Map<number, Target>();
  const [subscribed, mergeable] = await Promise.all([subscribedAmong(db, rows, viewer?.id ?? null), mergeableBy(db, viewer, rows)]);
  for (const view of await mergeRequestViews(db, rows)) {
    const entity = toMergeRequest(view, config, { subscribed: subscribed.has(view.row.id), canMerge: mergeable.has(view.row.id) });
    targets.set(view.row.id, { entity, url: entity.web_url, title: view.row.title });
  }
  return targets;
}

/** Issues as Entities::Issue (the full one, `subscribed` for the caller). */
async function issueTargets(db: Db, config: Config, viewer: Viewer | null, ids: readonly number[]): Promise<Map<number, Target>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('issues').selectAll().where('id', 'in', [...new Set(ids)]).execute();
  const targets = new Map<number, Target>();
  for (const view of await issueViews(db, rows)) {
    const entity = toIssue(view, config, { subscribed: await isSubscribedTo(db, view.row, viewer?.id ?? null), context: null });
    targets.set(view.row.id, { entity, url: entity.web_url as string, title: view.row.title });
  }
  return targets;
}

/** Entities::ProjectIdentity as a todo embeds its project. */
async function projectsOf(db: Db, rows: readonly TodoView[]) {
  const ids = [...new Set(rows.map((r) => r.project_id).filter((id): id is number => id !== null))];
  if (ids.length === 0) return new Map();
  const projects = await db.selectFrom('projects').select(['id', 'description', 'name', 'name_with_namespace', 'path', 'path_with_namespace', 'created_at']).where('id', 'in', ids).execute();
  return new Map(projects.map((p) => [p.id, { ...p, created_at: iso(p.created_at) }]));
}

/**
 * Entities::Todo (GitLab 12): `project` for a merge request's todo, `group` for an epic's;
 * `target` the target's own entity for the caller; `body` the target's title (Todo#body
 * without a note).
 */
export async function presentTodos(db: Db, config: Config, viewer: Viewer | null, rows: readonly TodoView[]) {
  const idsOf = (type: string) => rows.filter((r) => r.target_type === type).map((r) => r.target_id);
  const [epics, mergeRequests, issues, projects] = await Promise.all([
    epicTargets(db, config, viewer, idsOf('Epic')),
    mergeRequestTargets(db, config, viewer, idsOf('MergeRequest')),
    issueTargets(db, config, viewer, idsOf('Issue')),
    projectsOf(db, rows),
  ]);
  return rows.map((row) => {
    const target = (row.target_type === 'Epic' ? epics : row.target_type === 'Issue' ? issues : mergeRequests).get(row.target_id)!;
    return {
      id: row.id,
      ...(row.project_id !== null ? { project: projects.get(row.project_id) ?? null } : {}),
      ...(row.group_id !== null ? { group: groupOf(row) } : {}),
      author:
        row.author_username === null
          ? null
          : toUserBasic({ id: row.author_id, name: row.author_name!, username: row.author_username, state: row.author_state!, avatar_url: row.author_avatar_url, email: row.author_email! }, config),
      action_name: row.action,
      target_type: row.target_type,
      target: target.entity,
      target_url: target.url,
      body: target.title,
      state: row.state,
      created_at: iso(row.created_at),
    };
  });
}
