import type { Config } from '../../config.js';
import type { Db } from '../../database/database.js';
import type { LabelEventRecord, MilestoneEventRecord, ResourceEventRecord, StateEventRecord } from '../../domain/resource-events.js';
import type { LabelRow } from '../../projections/labels/tables.js';
import type { MilestoneRow } from '../../projections/milestones/tables.js';
import type { ResourceType } from '../../projections/resource-events/queries.js';
import { toLabelBasic } from './labels.js';
import { toMilestone } from './milestones.js';
import { toUserBasic, type UserReferenceRow } from './users.js';

/**
 * Entities::ResourceLabelEvent (GitLab 12), ResourceMilestoneEvent and ResourceStateEvent (GitLab
 * 13.x): id, user (UserBasic), created_at, resource_type, resource_id, then the label
 * (LabelBasic) and action, the milestone (Entities::Milestone), action and state, or the state.
 */

/** The issuable an event belongs to, and what its entities need of the project. */
export interface ResourceContext {
  readonly type: ResourceType;
  readonly id: number;
  readonly projectPath: string;
  readonly users: ReadonlyMap<number, UserReferenceRow>;
  readonly config: Config;
}

/** The users of some records, in one query. */
export async function resourceEventUsers(db: Db, records: readonly ResourceEventRecord[]): Promise<Map<number, UserReferenceRow>> {
  const ids = [...new Set(records.map((r) => r.userId))];
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('users').select(['id', 'name', 'username', 'state', 'avatar_url', 'email']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r]));
}

function head(record: ResourceEventRecord, ctx: ResourceContext) {
  const user = ctx.users.get(record.userId);
  return { id: record.id, user: user ? toUserBasic(user, ctx.config) : null, created_at: record.createdAt, resource_type: ctx.type, resource_id: ctx.id };
}

export const toResourceLabelEvent = (record: LabelEventRecord, labels: ReadonlyMap<number, LabelRow>, ctx: ResourceContext) => {
  const label = labels.get(record.labelId);
  return Object.assign(head(record, ctx), { label: label ? toLabelBasic(label) : null, action: record.action });
};

export const toResourceMilestoneEvent = (record: MilestoneEventRecord, milestones: ReadonlyMap<number, MilestoneRow>, ctx: ResourceContext) => {
  const milestone = milestones.get(record.milestoneId);
  return Object.assign(head(record, ctx), { milestone: milestone ? toMilestone(milestone, ctx.config, ctx.projectPath) : null, action: record.action, state: record.state });
};

export const toResourceStateEvent = (record: StateEventRecord, ctx: ResourceContext) => Object.assign(head(record, ctx), { state: record.state });
