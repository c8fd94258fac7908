import type { Config } from '../../config.js';
import type { Viewer } from '../../domain/access.js';
import { can } from '../../domain/policy/can.js';
import type { EpicOfIssue, EpicView } from '../../projections/epics/queries.js';
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

// ───────────────────────────── What an issue shows of its epic ─────────────────────────────

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Date#to_s(:medium), GitLab's `'%b %d, %Y'`: "Jun 05, 2020". */
const mediumDate = (date: string) => `${MONTHS[Number(date.slice(5, 7)) - 1]} ${date.slice(8, 10)}, ${date.slice(0, 4)}`;

const dayNumber = (date: string) => Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) / 86_400_000;
const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** Rails' distance_of_time_in_words between two dates (`from` before `to`), whole days apart. */
function distanceInWords(from: string, to: string): string {
  const minutes = (dayNumber(to) - dayNumber(from)) * 1440;
  if (minutes < 2520) return '1 day';
  if (minutes < 43200) return `${Math.round(minutes / 1440)} days`;
  if (minutes < 86400) {
    const months = Math.round(minutes / 43200);
    return `about ${months} ${months === 1 ? 'month' : 'months'}`;
  }
  if (minutes < 525600) return `${Math.round(minutes / 43200)} months`;
  const fromYear = Number(from.slice(0, 4)) + (Number(from.slice(5, 7)) >= 3 ? 1 : 0);
  const toYear = Number(to.slice(0, 4)) - (Number(to.slice(5, 7)) < 3 ? 1 : 0);
  let leapYears = 0;
  for (let year = fromYear; year <= toYear; year++) if (isLeap(year)) leapYears++;
  const offset = minutes - leapYears * 1440;
  const years = Math.floor(offset / 525600);
  const remainder = offset % 525600;
  const plural = (n: number) => `${n} ${n === 1 ? 'year' : 'years'}`;
  if (remainder < 131400) return `about ${plural(years)}`;
  if (remainder < 394200) return `over ${plural(years)}`;
  return `almost ${plural(years + 1)}`;
}

/**
 * EntityDateHelper#remaining_days_in_words (GitLab 12.10): "Past due", "Today", "Upcoming", "N
 * days remaining" with the numbers in <strong>, or "N days elapsed" from a start alone.
 */
export function remainingDaysInWords(dueDate: string | null, startDate: string | null, today: string): string | null {
  if (dueDate !== null && dueDate < today) return '<strong>Past due</strong>';
  if (dueDate !== null && dueDate === today) return '<strong>Today</strong>';
  if (startDate !== null && startDate > today) return '<strong>Upcoming</strong>';
  if (dueDate !== null) return `${distanceInWords(today, dueDate).replace(/\d+/g, (n) => `<strong>${n}</strong>`).replaceAll('about ', '')} remaining`;
  if (startDate !== null && startDate < today) {
    const days = dayNumber(today) - dayNumber(startDate);
    return `<strong>${days}</strong> ${days === 1 ? 'day' : 'days'} elapsed`;
  }
  return null;
}

/** EE's EpicBaseEntity (12.10): an issue's epic in the Issue entity's `epic`. */
export function toEpicBase(epic: EpicOfIssue, today: string) {
  return {
    id: epic.id,
    iid: epic.iid,
    title: epic.title,
    url: epicWebPath(epic.group_full_path, epic.iid),
    group_id: epic.group_id,
    ...(epic.due_date !== null ? { human_readable_end_date: mediumDate(epic.due_date) } : {}),
    ...(epic.due_date !== null || epic.start_date !== null ? { human_readable_timestamp: remainingDaysInWords(epic.due_date, epic.start_date, today) } : {}),
  };
}

/**
 * EE's Issue entity fields (12.10), for an issue whose project's group the viewer may read
 * epics of: `epic_iid` and `epic`, null without one.
 */
export const issueEpicFields = (epic: EpicOfIssue | null, today: string) => ({ epic_iid: epic?.iid ?? null, epic: epic ? toEpicBase(epic, today) : null });
