import type { EventIndex, EventMetadata } from './types.js';

/**
 * The events table's feed index columns (what the activity and audit feeds filter on). They
 * sit outside the hash chain, so `events verify` recomputes them from what the hash covers
 * and compares: an edit made directly in the database is found like an edit of the data.
 */
export interface FeedColumns {
  actor_id: number | null;
  project_id: number | null;
  group_id: number | null;
  target_type: string | null;
  target_id: number | null;
}

export const FEED_COLUMNS = ['actor_id', 'project_id', 'group_id', 'target_type', 'target_id'] as const satisfies readonly (keyof FeedColumns)[];

/**
 * An event's feed columns: the actor from its metadata, the rest from its aggregate's index.
 * The one mapping: the append writes it (store.ts planAppend), verify compares with it.
 */
export function feedColumns(index: EventIndex | undefined, metadata: EventMetadata): FeedColumns {
  return {
    actor_id: metadata.actor_id ?? null,
    project_id: index?.projectId ?? null,
    group_id: index?.groupId ?? null,
    target_type: index?.targetType ?? null,
    target_id: index?.targetId ?? null,
  };
}

/**
 * Recomputes an event's feed columns from its type, its data (upcast to the current schema)
 * and its metadata, with the aggregate index the append used; `undefined` when no aggregate
 * defines the type. The event store knows no area: verify takes this as an option, and
 * src/commands/kernel/aggregates.ts builds it from the aggregates (`feedIndexOf`).
 */
export type FeedIndexOf = (type: string, data: unknown, metadata: EventMetadata) => FeedColumns | undefined;
