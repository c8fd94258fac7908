import type { Db } from '../database/database.js';
import type { IssuableEvent, LoggedIssuableEvent } from '../domain/issuable-history.js';
import { readStream } from '../eventstore/store.js';

/**
 * An issue's or merge request's stream as the walk of src/domain/issuable-history.ts takes
 * it (system notes, resource events): its events of `types`, in order, with their positions.
 */
export async function readIssuableHistory<T extends IssuableEvent['type']>(db: Db, streamId: string, types: readonly T[]): Promise<LoggedIssuableEvent<Extract<IssuableEvent, { type: T }>>[]> {
  const wanted = new Set<string>(types);
  return (await readStream(db, streamId))
    .filter((e) => wanted.has(e.type))
    .map((e) => ({ event: { type: e.type, data: e.data } as Extract<IssuableEvent, { type: T }>, position: String(e.globalPosition), occurredAt: e.occurredAt.toISOString(), actorId: e.actorId }));
}
