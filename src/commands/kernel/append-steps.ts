import type { Db } from '../../database/database.js';
import { sql, type CompiledQuery } from 'kysely';
import type { Claim, ClaimChanges, Decider, DomainEvent } from '../../domain/decider.js';
import type { EventSchemas } from '../../domain/events.js';
import { currentSchemaVersion } from '../../eventstore/upcasters.js';
import type { AppendInput } from '../../eventstore/store.js';
import type { ProjectedEvent, StoredEvent } from '../../eventstore/types.js';
import type { Projector } from '../../projections/projector.js';
import { GENESIS_HASH } from '../../eventstore/store.js';
import type { CommandContext, CommandSpec, Outcome, Writer } from './context.js';
import type { FoldedStream } from './stream-cache.js';

/**
 * The steps both write paths take — the ordinary transaction (handler.ts) and the single
 * batch (one-round-trip.ts) — written once, so a field added to one cannot be missed in the
 * other.
 */

/**
 * The stream's fold as known without reading it: the process's cached one, or a new stream's
 * initial state (CommandSpec.newStream). Either may be wrong; the append's expected version
 * finds out.
 */
export function knownFold<S>(ctx: CommandContext, spec: Pick<CommandSpec<unknown, DomainEvent, S>, 'decider' | 'streamId' | 'key' | 'newStream'>): FoldedStream<S> | undefined {
  const cached = ctx.streamCache?.get<S>(spec.decider, spec.streamId);
  if (cached || !spec.newStream) return cached;
  return { version: 0, state: spec.decider.initialState(spec.key), hash: GENESIS_HASH };
}

/** What appending `decided` at the stream's head writes (either path). */
export function appendInput<E extends DomainEvent>(
  w: Writer,
  spec: Pick<CommandSpec<unknown, E, unknown>, 'streamId' | 'index' | 'events'>,
  decided: readonly E[],
  version: number,
  headHash: string,
): AppendInput {
  return {
    streamId: spec.streamId,
    expectedVersion: version,
    headHash,
    events: decided.map((event) => ({
      type: event.type,
      data: checked(spec.events, event),
      schemaVersion: currentSchemaVersion(event.type),
      index: spec.index?.(event),
    })),
    metadata: w.metadata,
    occurredAt: w.ctx.now(),
  };
}

/**
 * A decided event's payload, checked against its type's schema: a decider that emits a
 * payload its own schema refuses is a defect, refused before anything is written.
 */
function checked(schemas: EventSchemas, event: DomainEvent): unknown {
  const schema = schemas[event.type];
  if (!schema) throw new Error(`${event.type} is not an event of this aggregate (${Object.keys(schemas).join(', ')})`);
  const result = schema.safeParse(event.data);
  if (!result.success) throw new Error(`${event.type} does not match its schema: ${result.error.message}`);
  return event.data;
}

/** The outcome of appending `decided` (stored as `stored`) to a stream folded to `state` at `version`. */
export function outcomeOf<E extends DomainEvent, S>(
  decider: Pick<Decider<unknown, E, S>, 'evolve'>,
  state: S,
  version: number,
  decided: readonly E[],
  stored: readonly StoredEvent[],
): Outcome<S> {
  for (const event of decided) state = decider.evolve(state, event);
  const newVersion = version + decided.length;
  return { result: { state, version: newVersion, events: stored }, head: { version: newVersion, state, hash: stored.at(-1)!.hash } };
}

/** Each event, just appended, through each projector that handles it, in that order; `applying` hears of each step first. */
export async function runInlineProjections(
  trx: Db,
  projectors: readonly Projector[],
  events: readonly ProjectedEvent[],
  applying?: (projector: Projector, event: ProjectedEvent) => void,
) {
  for (const event of events) {
    for (const projector of projectors) {
      if (!projector.handles.includes(event.type)) continue;
      applying?.(projector, event);
      await projector.applyNew(event, trx);
    }
  }
}

/** Gives a released claim back, if this stream holds it (either path). */
export const releaseClaim = (db: Db, streamId: string, released: Omit<Claim, 'conflictMessage'>) =>
  db.deleteFrom('claims').where('kind', '=', released.kind).where('key', '=', released.key).where('stream_id', '=', streamId);

/**
 * Takes claims for a stream (either path): a claim the stream already holds is kept; one
 * another stream holds returns no row.
 */
export const takeClaims = (db: Db, streamId: string, acquire: readonly Claim[]) =>
  db
    .insertInto('claims')
    .values(acquire.map((c) => ({ kind: c.kind, key: c.key, stream_id: streamId })))
    .onConflict((oc) => oc.columns(['kind', 'key']).doUpdateSet({ stream_id: streamId }).where('claims.stream_id', '=', streamId))
    .returning(['kind', 'key']);

/**
 * Claim changes as statements sent in a batch without reading their results (either path):
 * the releases, then the acquisitions in one statement that divides by zero (22012) when
 * another stream holds one of them.
 */
export function claimStatements(db: Db, streamId: string, changes: ClaimChanges): CompiledQuery[] {
  const statements = changes.release.map((released) => releaseClaim(db, streamId, released).compile());
  if (changes.acquire.length === 0) return statements;
  const held = sql<number>`1 / ((select count(*) from taken) = ${changes.acquire.length})::int`;
  statements.push(db.with('taken', () => takeClaims(db, streamId, changes.acquire)).selectNoFrom(held.as('held')).compile());
  return statements;
}

/** The claims each decided event takes and gives back, those that change anything (either path). */
export function claimsOf<E extends DomainEvent, S>(spec: CommandSpec<unknown, E, S>, decided: readonly E[], state: S): ClaimChanges[] {
  if (!spec.claims) return [];
  const changes: ClaimChanges[] = [];
  let before = state;
  for (const event of decided) {
    const change = spec.claims(event, before);
    if (change.acquire.length > 0 || change.release.length > 0) changes.push(change);
    before = spec.decider.evolve(before, event);
  }
  return changes;
}
