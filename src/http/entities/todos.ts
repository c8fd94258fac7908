import type { Config } from '../../config.js';
import type { Db } from '../../database.js';
import type { Viewer } from '../../domain/access.js';
import { findEpicsByIds } from '../../projections/epics/queries.js';
import type { TodoView } from '../../projections/todos/queries.js';
import { canAdminEpic, epicWebPath, toEpic } from './epics.js';
import { iso, toUserBasic } from './users.js';

/** Entities::NamespaceBasic as a todo embeds its group. */
const groupOf = (row: TodoView) => ({ id: row.group_id, name: row.group_name, path: row.group_path, kind: 'group', full_path: row.group_full_path, parent_id: row.group_parent_id });

/**
 * Entities::Todo (GitLab 12): `group` for a group's todo (an epic's) where a merge request's
 * has `project`; `target` the target's own entity for the caller; `body` the target's title
 * (Todo#body without a note).
 */
export async function presentTodos(db: Db, config: Config, viewer: Viewer | null, rows: readonly TodoView[]) {
  const epics = new Map((await findEpicsByIds(db, viewer, rows.filter((r) => r.target_type === 'Epic').map((r) => r.target_id))).map((e) => [e.id, e]));
  return rows.map((row) => {
    const epic = epics.get(row.target_id)!;
    return {
      id: row.id,
      ...(row.group_id !== null ? { group: groupOf(row) } : {}),
      author:
        row.author_username === null
          ? null
          : toUserBasic({ id: row.author_id, name: row.author_name!, username: row.author_username, state: row.author_state!, avatar_url: row.author_avatar_url, email: row.author_email! }, config),
      action_name: row.action,
      target_type: row.target_type,
      target: toEpic(epic, config, { canAdmin: canAdminEpic(viewer, epic) }),
      target_url: `${config.externalUrl}${epicWebPath(epic.group_full_path, epic.iid)}`,
      body: epic.title,
      state: row.state,
      created_at: iso(row.created_at),
    };
  });
}
