import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Db } from '../../database/database.js';
import type { Viewer } from '../../domain/access.js';
import {
  activityRecord,
  activityTypes,
  activityTypesAuthoredBy,
  activityTypesNotWithCreation,
  type ActivityAction,
  type ActivityEventType,
  type ActivityRecord,
  type ActivityTargetFilter,
} from '../../domain/feeds/activity.js';
import { upcast } from '../../eventstore/upcasters.js';
import { groupReadableBy } from '../groups/queries.js';
import { projectReadableBy } from '../projects/queries.js';
import { issueEventVisible } from '../issues/list-query.js';

/**
 * The activity feeds: a query over the event log (its index columns) and the mapping of
 * src/domain/feeds/activity.ts. No table is written for them; visibility is decided here, at
 * query time, with the read_project / read_group SQL every list uses.
 */

export interface ActivityFilters {
  readonly action?: ActivityAction | undefined;
  readonly targetType?: ActivityTargetFilter | undefined;
  /** YYYY-MM-DD: events before that day (GitLab: created_at < before.beginning_of_day). */
  readonly before?: string | undefined;
  /** YYYY-MM-DD: events after that day (GitLab: created_at > after.end_of_day). */
  readonly after?: string | undefined;
  readonly sort: 'asc' | 'desc';
}

/** Whose events: one project's, or one user's (as their author). */
export type ActivitySource = { readonly projectId: number } | { readonly authorId: number };

/** Spec (Limits): activity events are kept 2 years. */
export const ACTIVITY_RETENTION_YEARS = 2;

/** One event of a feed, with its author's columns (the user reference). */
export interface ActivityRow {
  readonly project_id: number | null;
  readonly occurred_at: Date;
  readonly author: { readonly id: number; readonly name: string; readonly username: string; readonly state: 'active' | 'blocked'; readonly avatar_url: string | null; readonly email: string };
  readonly record: ActivityRecord;
}

interface EventRow {
  event_type: string;
  schema_version: number;
  data: unknown;
  occurred_at: Date;
  project_id: number | null;
  author_id: number;
  author_name: string;
  author_username: string;
  author_state: 'active' | 'blocked';
  author_avatar_url: string | null;
  author_email: string;
}

const list = (values: readonly string[]) => sql`${[...values]}::text[]`;

const TARGET_AUTHORED = activityTypesAuthoredBy('target');
const ACTOR_AUTHORED = activityTypesAuthoredBy('actor');

/** The author of an event: its actor, or for GitLab's join and leave events the member (the index's target). */
const AUTHOR_ID = sql<number>`(case when e.event_type = any(${list(TARGET_AUTHORED)}) then e.target_id else e.actor_id end)`;

/**
 * The event's time, as an expression no index matches: the feeds go by their source's index
 * (project, actor, target). A prepared statement's generic plan otherwise ANDed in the
 * occurred_at index for the retention bound, which matches nearly the whole log (86 ms of
 * 88 on a log of 1,000,000 events).
 */
const OCCURRED_AT = sql`(e.occurred_at + interval '0 seconds')`;

function startOfDay(date: string, plusDays = 0): Date {
  const day = new Date(`${date}T00:00:00.000Z`);
  day.setUTCDate(day.getUTCDate() + plusDays);
  return day;
}

function retentionStart(now: Date): Date {
  const start = new Date(now);
  start.setUTCFullYear(start.getUTCFullYear() - ACTIVITY_RETENTION_YEARS);
  return start;
}

/** Which events: the source's, of the filtered types, kept, within the dates. */
function selection(source: ActivitySource, filters: ActivityFilters, now: Date): Expression<SqlBool>[] {
  const types = activityTypes({ action: filters.action, targetType: filters.targetType });
  const parts: Expression<SqlBool>[] = [];
  if ('projectId' in source) {
    parts.push(sql`e.project_id = ${source.projectId}`, sql`e.event_type = any(${list(types)})`);
  } else {
    // Two index paths (events_actor, events_target), one per kind of author.
    const byActor = types.filter((t) => ACTOR_AUTHORED.includes(t));
    const byTarget = types.filter((t) => TARGET_AUTHORED.includes(t));
    parts.push(sql`((e.actor_id = ${source.authorId} and e.event_type = any(${list(byActor)}))
      or (e.target_type = 'User' and e.target_id = ${source.authorId} and e.event_type = any(${list(byTarget)})))`);
  }
  parts.push(sql`${OCCURRED_AT} >= ${retentionStart(now).toISOString()}::timestamptz`);
  if (filters.before !== undefined) parts.push(sql`${OCCURRED_AT} < ${startOfDay(filters.before).toISOString()}::timestamptz`);
  if (filters.after !== undefined) parts.push(sql`${OCCURRED_AT} >= ${startOfDay(filters.after, 1).toISOString()}::timestamptz`);
  // Committed with the creation, such an event is its stream's first: only those are looked
  // at (CASE keeps the transaction's lookup off every other row).
  for (const { type, creations } of activityTypesNotWithCreation()) {
    parts.push(sql`not (case when e.event_type = ${type} and e.stream_version = 1 then exists (select 1 from events c
      where c.transaction_id = e.transaction_id and c.event_type = any(${list(creations)})
        and c.project_id is not distinct from e.project_id and c.group_id is not distinct from e.group_id) else false end)`);
  }
  return parts;
}

/**
 * What the viewer may see of a user's events: those of projects (or, without a project,
 * groups) they may read; those of a project or group since deleted only when they are the
 * event's author (their own history keeps it; nobody else sees a deleted resource);
 * administrators everything.
 */
function visibleTo(viewer: Viewer | null): Expression<SqlBool> {
  if (viewer?.isAdmin) return sql<SqlBool>`true`;
  const ownEvent = viewer ? sql<SqlBool>`${AUTHOR_ID} = ${viewer.id}` : sql<SqlBool>`false`;
  return sql<SqlBool>`(case
    when e.project_id is not null then
      case when p.id is null or p.pending_delete then ${ownEvent} else ${projectReadableBy(viewer, 'p')} end
    when e.group_id is not null then
      case when g.id is null or g.pending_delete then ${ownEvent} else ${groupReadableBy(viewer, 'g')} end
    else ${ownEvent} end)`;
}

/**
 * The feed's events and their count. The project feed's project is the caller's to read
 * (the route's userProject); a user feed is filtered event by event.
 */
function feedQuery(source: ActivitySource, viewer: Viewer | null, filters: ActivityFilters, now: Date, select: RawBuilder<unknown>, tail: RawBuilder<unknown>) {
  const where = selection(source, filters, now);
  // An issue's events only for who may see the issue (a confidential one, a deleted one).
  const issueVisible = sql<SqlBool>`(e.target_type is distinct from 'Issue' or ${issueEventVisible(viewer, sql`e.target_id`)})`;
  // A note on an issue (a confidential note on a confidential one) likewise (Event#visible_to_user? of a note: its noteable's).
  const issueNoteVisible = sql<SqlBool>`(e.event_type <> 'NoteAdded' or e.data->>'noteable_type' <> 'Issue' or ${issueEventVisible(viewer, sql`(e.data->>'noteable_id')::integer`)})`;
  const perEvent = 'projectId' in source ? [issueVisible, issueNoteVisible] : [visibleTo(viewer), issueVisible, issueNoteVisible];
  const joins =
    'projectId' in source
      ? sql``
      : sql`left join projects p on p.id = e.project_id
            left join namespaces g on g.id = e.group_id and e.project_id is null`;
  // GitLab deletes a user's events with the user (events.author_id ON DELETE CASCADE): an
  // event whose author no longer exists is not shown, hence the inner join.
  return sql`select ${select} from events e join users a on a.id = ${AUTHOR_ID} ${joins}
    where ${sql.join([...where, ...perEvent], sql` and `)} ${tail}`;
}

export interface ActivityPage {
  readonly rows: ActivityRow[];
  /** Undefined past `countLimit`: the page is answered without counts. */
  readonly total: number | undefined;
  /** Whether a row follows this page (what a page without counts says of the next one). */
  readonly hasNext: boolean;
}

/** One page of a feed, newest first unless `sort` is asc (GitLab orders by the event's id: here its log position). */
export async function activityFeed(
  db: Db,
  source: ActivitySource,
  viewer: Viewer | null,
  filters: ActivityFilters,
  now: Date,
  page: { readonly limit: number; readonly offset: number; readonly countLimit: number },
): Promise<ActivityPage> {
  const columns = sql`e.event_type, e.schema_version, e.data, e.occurred_at, e.project_id,
    a.id as author_id, a.name as author_name, a.username as author_username, a.state as author_state,
    a.avatar_url as author_avatar_url, a.email as author_email`;
  const order = filters.sort === 'asc' ? sql`asc` : sql`desc`;
  const [{ rows }, counted] = await Promise.all([
    feedQuery(source, viewer, filters, now, columns, sql`order by e.global_position ${order} limit ${page.limit + 1} offset ${page.offset}`).execute(db) as Promise<{ rows: EventRow[] }>,
    sql`select count(*) as count from (${feedQuery(source, viewer, filters, now, sql`1`, sql`limit ${page.countLimit + 1}`)}) as limited`.execute(db) as Promise<{ rows: { count: string }[] }>,
  ]);
  const total = Number(counted.rows[0]?.count ?? 0);
  return { rows: rows.slice(0, page.limit).map(toActivityRow), total: total > page.countLimit ? undefined : total, hasNext: rows.length > page.limit };
}

function toActivityRow(row: EventRow): ActivityRow {
  const { data } = upcast(row.event_type, row.schema_version, row.data);
  return {
    project_id: row.project_id,
    occurred_at: new Date(row.occurred_at),
    author: { id: row.author_id, name: row.author_name, username: row.author_username, state: row.author_state, avatar_url: row.author_avatar_url, email: row.author_email },
    record: activityRecord(row.event_type as ActivityEventType, data),
  };
}
