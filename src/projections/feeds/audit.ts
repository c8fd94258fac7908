import { sql, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely';
import type { Database, Db } from '../../database/database.js';
import {
  AUDIT_ENTITY_TYPES_OF,
  AUDITED_EVENT_TYPES,
  type AuditDescription,
  type AuditEntityType,
  type AuditedEventType,
  auditChangesAnyOf,
  auditUsers,
  describeAudit,
} from '../../domain/feeds/audit.js';
import type { EventMetadataRow } from '../../eventstore/tables.js';
import { upcast } from '../../eventstore/upcasters.js';

/**
 * The audit feed: a query over the event log (no table of its own) through the mapping of
 * src/domain/feeds/audit.ts. Filters use the log's index columns (entity → project_id,
 * group_id or target_type/target_id) and `event_type`, newest first by global position,
 * which is also the record's id.
 */

export interface AuditFilters {
  readonly entityType?: AuditEntityType | undefined;
  readonly entityId?: number | undefined;
  readonly createdAfter?: Date | undefined;
  readonly createdBefore?: Date | undefined;
}

type Events = ExpressionBuilder<Database, 'events'>;

/** The event types an entity type's records come from. */
const typesOf = (entityType: AuditEntityType | undefined): AuditedEventType[] =>
  AUDITED_EVENT_TYPES.filter((type) => entityType === undefined || AUDIT_ENTITY_TYPES_OF[type].includes(entityType));

/** `event_type = any(…)` for the types every event of which is audited, or-ed with the types audited only for some changes. */
function audited(eb: Events, types: readonly AuditedEventType[]): Expression<SqlBool> {
  const always = types.filter((type) => auditChangesAnyOf(type) === undefined);
  const alternatives: Expression<SqlBool>[] = [];
  if (always.length > 0) alternatives.push(eb('event_type', '=', sql<string>`any(${sql.val(always)}::text[])`));
  for (const type of types) {
    const keys = auditChangesAnyOf(type);
    if (keys) alternatives.push(eb.and([eb('event_type', '=', type), sql<SqlBool>`data -> 'changes' ?| ${sql.val([...keys])}::text[]`]));
  }
  return alternatives.length === 0 ? sql<SqlBool>`false` : eb.or(alternatives);
}

/** The entity as the index columns say it: a project's events carry project_id, a group's group_id, a user's only their target. */
function entity(eb: Events, entityType: AuditEntityType, entityId: number | undefined): Expression<SqlBool> {
  switch (entityType) {
    case 'Project':
      return entityId === undefined ? eb('project_id', 'is not', null) : eb('project_id', '=', entityId);
    case 'Group':
      return eb.and([entityId === undefined ? eb('group_id', 'is not', null) : eb('group_id', '=', entityId), eb('project_id', 'is', null)]);
    case 'User':
      return eb.and([
        eb('target_type', '=', 'User'),
        ...(entityId === undefined ? [] : [eb('target_id', '=', entityId)]),
        eb('project_id', 'is', null),
        eb('group_id', 'is', null),
      ]);
  }
}

const AUDIT_COLUMNS = ['global_position', 'event_type', 'schema_version', 'data', 'metadata', 'actor_id', 'occurred_at'] as const;

/** The audit records matching the filters, as a query the caller orders (`newestFirst`) and pages. */
export function auditEventsQuery(db: Db, filters: AuditFilters = {}) {
  const { entityType, entityId, createdAfter, createdBefore } = filters;
  let query = db
    .selectFrom('events')
    .select(AUDIT_COLUMNS)
    .where((eb) => audited(eb, typesOf(entityType)));
  if (entityType !== undefined) query = query.where((eb) => entity(eb, entityType, entityId));
  // GitLab's AuditLogFinder: created_at >= created_after, created_at <= created_before.
  if (createdAfter !== undefined) query = query.where('occurred_at', '>=', createdAfter);
  if (createdBefore !== undefined) query = query.where('occurred_at', '<=', createdBefore);
  return query;
}

export type AuditEventsQuery = ReturnType<typeof auditEventsQuery>;
export type AuditEventRow = Awaited<ReturnType<AuditEventsQuery['execute']>>[number];

/** GitLab's AuditLogFinder order: newest first. */
export const newestFirst = (query: AuditEventsQuery) => query.orderBy('global_position', 'desc');

/** One record by id (a global position), within the filters; undefined when that position is no such record. */
export async function findAuditEvent(db: Db, id: string, filters: AuditFilters = {}): Promise<AuditEventRow | undefined> {
  return auditEventsQuery(db, filters).where('global_position', '=', id).executeTakeFirst();
}

// ───────────────────────────── Records ─────────────────────────────

export interface AuditRecord {
  readonly id: number;
  readonly authorId: number | null;
  readonly createdAt: Date;
  readonly description: AuditDescription;
  readonly authorName: string | null;
  readonly ipAddress: string | null;
  /** The entity's full path when the event was written if it says, otherwise as it is now; null once the entity is gone. */
  readonly entityPath: string | null;
  /** The administrator behind a sudo or an impersonation token (GitLab 13's `impersonated_by`). */
  readonly impersonatedBy: string | null;
}

/** The records of a page of rows, with the names and paths they show read in a few queries. */
export async function auditRecords(db: Db, rows: readonly AuditEventRow[]): Promise<AuditRecord[]> {
  const events = rows.map((row) => {
    const type = row.event_type as AuditedEventType;
    return { row, type, data: upcast(type, row.schema_version, row.data).data, metadata: (row.metadata ?? {}) as EventMetadataRow };
  });
  const impersonators = await impersonatorsOf(db, events);
  const userIds = new Set<number>(impersonators.values());
  for (const { row, type, data, metadata } of events) {
    if (row.actor_id !== null) userIds.add(row.actor_id);
    if (metadata.sudo_from_id) userIds.add(metadata.sudo_from_id);
    for (const id of auditUsers(type, data)) userIds.add(id);
  }
  const names = await userNames(db, [...userIds]);
  const lookup = { userName: (id: number) => names.get(id) ?? null };
  const described = events.map((event) => ({ ...event, description: describeAudit(event.type, event.data, lookup) }));
  const paths = await currentPaths(
    db,
    described.filter((event) => event.description.entityPath === undefined).map((event) => event.description.entity),
  );
  return described.map(({ row, metadata, description }) => {
    const { type, id } = description.entity;
    const impersonator = metadata.sudo_from_id ?? impersonators.get(row.global_position) ?? null;
    return {
      id: Number(row.global_position),
      authorId: row.actor_id,
      createdAt: new Date(row.occurred_at),
      description,
      authorName: row.actor_id === null ? null : (names.get(row.actor_id) ?? metadata.actor_username ?? null),
      ipAddress: metadata.ip ?? null,
      entityPath: description.entityPath !== undefined ? description.entityPath : (paths.get(`${type}-${id}`) ?? null),
      impersonatedBy: impersonator === null ? null : (names.get(impersonator) ?? null),
    };
  });
}

async function userNames(db: Db, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}

/** Full paths as they are now: a project's path_with_namespace, a group's full_path, a user's username. */
async function currentPaths(db: Db, entities: readonly { type: AuditEntityType; id: number }[]): Promise<Map<string, string>> {
  const ids = (type: AuditEntityType) => [...new Set(entities.filter((e) => e.type === type).map((e) => e.id))];
  const [projects, groups, users] = [ids('Project'), ids('Group'), ids('User')];
  const paths = new Map<string, string>();
  const [projectRows, groupRows, userRows] = await Promise.all([
    projects.length === 0 ? [] : db.selectFrom('projects').select(['id', 'path_with_namespace as path']).where('id', 'in', projects).execute(),
    groups.length === 0 ? [] : db.selectFrom('namespaces').select(['id', 'full_path as path']).where('id', 'in', groups).execute(),
    users.length === 0 ? [] : db.selectFrom('users').select(['id', 'username as path']).where('id', 'in', users).execute(),
  ]);
  for (const row of projectRows) paths.set(`Project-${row.id}`, row.path);
  for (const row of groupRows) paths.set(`Group-${row.id}`, row.path);
  for (const row of userRows) paths.set(`User-${row.id}`, row.path);
  return paths;
}

/**
 * Who made the impersonation tokens the rows were written with: the actor of the token's
 * PersonalAccessTokenCreated event, found through the impersonated user's target index.
 */
async function impersonatorsOf(db: Db, events: readonly { row: AuditEventRow; metadata: EventMetadataRow }[]): Promise<Map<string, number>> {
  const impersonated = events.filter(({ row, metadata }) => metadata.impersonation && metadata.token_id && row.actor_id !== null);
  const found = new Map<string, number>();
  if (impersonated.length === 0) return found;
  const tokens = await db
    .selectFrom('events')
    .select(['target_id', 'actor_id', sql<string>`data ->> 'id'`.as('token_id')])
    .where('event_type', '=', 'PersonalAccessTokenCreated')
    .where('target_type', '=', 'User')
    .where('target_id', 'in', [...new Set(impersonated.map(({ row }) => row.actor_id!))])
    .execute();
  const creator = new Map(tokens.map((token) => [`${token.target_id}:${token.token_id}`, token.actor_id]));
  for (const { row, metadata } of impersonated) {
    const actor = creator.get(`${row.actor_id}:${metadata.token_id}`);
    if (actor !== undefined && actor !== null) found.set(row.global_position, actor);
  }
  return found;
}
