import type { Db } from '../../database/database.js';
import { issueStreamId } from '../../domain/issues/events.js';
import { mergeRequestStreamId } from '../../domain/merge-requests/events.js';
import { RESOURCE_EVENT_TYPES, resourceEvents, type ResourceEventKind, type ResourceEventRecord } from '../../domain/resource-events.js';
import { readIssuableHistory } from '../issuable-history.js';
import type { LabelRow } from '../labels/tables.js';
import type { MilestoneRow } from '../milestones/tables.js';

/**
 * The reads of the resource events routes: the records from the issuable's stream in the log
 * (src/domain/resource-events.ts), with the labels and milestones they name looked up now. A
 * label or milestone deleted since shows as null, as GitLab's `on_delete: :nullify` leaves it.
 */

export type ResourceType = 'Issue' | 'MergeRequest';

export interface ResourceEventsOf<K extends ResourceEventKind> {
  readonly records: Extract<ResourceEventRecord, { kind: K }>[];
  readonly labels: ReadonlyMap<number, LabelRow>;
  readonly milestones: ReadonlyMap<number, MilestoneRow>;
}

/** The resource events of one kind of an issue or merge request, oldest first. */
export async function resourceEventsOf<K extends ResourceEventKind>(db: Db, type: ResourceType, id: number, kind: K): Promise<ResourceEventsOf<K>> {
  const stream = await readIssuableHistory(db, type === 'Issue' ? issueStreamId(id) : mergeRequestStreamId(id), RESOURCE_EVENT_TYPES);
  const all: ResourceEventRecord[] = resourceEvents(stream).filter((r) => r.kind === kind);
  const labelIds = [...new Set(all.flatMap((r) => (r.kind === 'label' ? [r.labelId] : [])))];
  const milestoneIds = [...new Set(all.flatMap((r) => (r.kind === 'milestone' ? [r.milestoneId] : [])))];
  const records = all as Extract<ResourceEventRecord, { kind: K }>[];
  const [labels, milestones] = await Promise.all([
    labelIds.length > 0 ? db.selectFrom('labels').selectAll().where('id', 'in', labelIds).execute() : [],
    milestoneIds.length > 0 ? db.selectFrom('milestones').selectAll().where('id', 'in', milestoneIds).execute() : [],
  ]);
  return { records, labels: new Map(labels.map((l) => [l.id, l])), milestones: new Map(milestones.map((m) => [m.id, m])) };
}
