import type { Config } from '../../config.js';
import type { Viewer } from '../../domain/access.js';
import { can } from '../../domain/policy/can.js';
import type { EpicView } from '../../projections/epics/queries.js';
import { iso, toUserBasic } from './users.js';

export interface EpicViewOptions {
  /** EE::API::Entities::Epic's `can_admin_epic`: the fixed and inherited date fields. */
  readonly canAdmin: boolean;
  /** The single view adds `subscribed`: the caller's id, or null for none. */
  readonly subscribedFor?: number | null | undefined;
}

/** `Ability.allowed?(user, :admin_epic, epic)`: EpicPolicy delegates to the epic's group, where the viewer has `access_level`. */
export const canAdminEpic = (viewer: Viewer | null, epic: EpicView) => can({ kind: 'group', viewer, role: epic.access_level, group: epic }, 'admin_epic');

export const epicWebPath = (groupFullPath: string, iid: number) => `/groups/${groupFullPath}/-/epics/${iid}`;

/** The author as Entities::UserBasic; null when the user is gone. */
function author(row: EpicView, config: Config) {
  if (row.author_username === null) return null;
  return toUserBasic(
    { id: row.author_id, name: row.author_name!, username: row.author_username, state: row.author_state!, avatar_url: row.author_avatar_url, email: row.author_email! },
    config,
  );
}

/**
 * EE::API::Entities::Epic (GitLab 12.6+): the deprecated `end_date` and `*_from_milestones`
 * beside their successors, the date sources and `web_edit_url` for those who may edit,
 * `references` and the older `reference`, `subscribed` in the single view only. Epics have
 * no award emoji here yet: upvotes and downvotes are 0.
 */
export function toEpic(row: EpicView, config: Config, options: EpicViewOptions) {
  const { canAdmin } = options;
  const webPath = epicWebPath(row.group_full_path, row.iid);
  const short = `&${row.iid}`;
  return {
    id: row.id,
    iid: row.iid,
    group_id: row.group_id,
    parent_id: row.parent_id,
    title: row.title,
    description: row.description,
    author: author(row, config),
    start_date: row.start_date,
    ...(canAdmin
      ? {
          start_date_is_fixed: row.start_date_is_fixed,
          start_date_fixed: row.start_date_fixed,
          start_date_from_inherited_source: row.start_date_from_inherited_source,
          start_date_from_milestones: row.start_date_from_inherited_source,
        }
      : {}),
    end_date: row.due_date,
    due_date: row.due_date,
    ...(canAdmin
      ? {
          due_date_is_fixed: row.due_date_is_fixed,
          due_date_fixed: row.due_date_fixed,
          due_date_from_inherited_source: row.due_date_from_inherited_source,
          due_date_from_milestones: row.due_date_from_inherited_source,
        }
      : {}),
    state: row.state,
    ...(canAdmin ? { web_edit_url: webPath } : {}),
    web_url: `${config.externalUrl}${webPath}`,
    references: { short, relative: short, full: `${row.group_full_path}${short}` },
    reference: short,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    closed_at: iso(row.closed_at),
    labels: [...row.labels].sort(),
    upvotes: 0,
    downvotes: 0,
    // Subscribable#subscribed_without_subscriptions?: participants are subscribed, and the author is one.
    ...(options.subscribedFor !== undefined ? { subscribed: options.subscribedFor !== null && options.subscribedFor === row.author_id } : {}),
  };
}
