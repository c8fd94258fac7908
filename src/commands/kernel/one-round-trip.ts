import type { QueryResult } from 'kysely';
import type { DomainEvent } from '../../domain/decider.js';
import { DomainError } from '../../domain/errors.js';
import { planAppend } from '../../eventstore/store.js';
import { appendInput, outcomeOf } from './append-steps.js';
import { asPreconditionFailure } from './precondition.js';
import { recordProjections, UnrecordableProjection } from './record-projections.js';
import type { Projector } from '../../projections/projector.js';
import type { CommandSpec, Outcome, Writer } from './context.js';

/**
 * A command's whole transaction in one round trip to PostgreSQL: the append and the inline
 * projections' statements go out as one batch (StatementBatch in src/database/pg-client.ts), which
 * commits whole or not at all. Each round trip costs Node and the database a wake-up, a
 * read and a write on both sides; a status change made five of them (BEGIN, INSERT,
 * UPDATE, COMMIT and authentication) and now makes one (see withWriter in src/http/kernel/auth.ts).
 *
 * It applies when nothing in the transaction depends on what an earlier statement returns:
 * - the decision is made on the process's cached fold, without reading the stream (a
 *   concurrent append makes the INSERT fail on its expected version, and the caller then
 *   takes the ordinary path, which reads);
 * - the command is given, not built from rows read in the transaction;
 * - the events take and give back no uniqueness claims (a refused claim is seen in a result);
 * - no inline projector of the events acts on what its statements return: they are recorded
 *   (record-projections.ts, which finds that out) and sent after the INSERT, in the same
 *   batch. A projector found reading results for an event type is not recorded for that
 *   type again in this process.
 * A precondition (handler.ts) goes first in the batch.
 * Otherwise, and for outcomes that append nothing (they are confirmed against the log),
 * it answers `undefined` and the caller runs the ordinary path.
 */
export async function decideInOneRoundTrip<C, E extends DomainEvent, S>(
  w: Writer,
  spec: CommandSpec<C, E, S>,
): Promise<Outcome<S> | undefined> {
  const { ctx } = w;
  if (!ctx.oneRoundTrip || typeof spec.command === 'function') return undefined;
  const { decider } = spec;
  const cached = ctx.streamCache?.get<S>(decider, spec.streamId);
  if (!cached) return undefined;

  let decided: readonly E[];
  try {
    decided = decider.decide(spec.command as C, cached.state);
  } catch (error) {
    if (error instanceof DomainError) return undefined;
    throw error;
  }
  if (decided.length === 0 || takesClaims(spec, decided, cached.state)) return undefined;
  const projectors = ctx.inlineProjectors.filter((p) => decided.some((event) => p.handles.includes(event.type)));
  if (projectors.some((p) => decided.some((event) => readsResults.get(p)?.has(event.type)))) return undefined;

  const plan = planAppend(ctx.db, appendInput(w, spec, decided, cached.version, cached.hash));
  const projections = await recordProjections(projectors, plan.pending());
  if (projections instanceof UnrecordableProjection) {
    const types = readsResults.get(projections.projector) ?? new Set<string>();
    readsResults.set(projections.projector, types.add(projections.eventType));
    return undefined;
  }
  const { precondition } = ctx;
  let results: QueryResult<unknown>[];
  try {
    results = await ctx.oneRoundTrip([...(precondition ? [precondition.statement] : []), plan.insert, ...projections]);
  } catch (error) {
    const failedAt = (error as { statementIndex?: number }).statementIndex;
    throw precondition && failedAt === 0 ? asPreconditionFailure(error) : error;
  }
  precondition?.held();
  const inserted = results[precondition ? 1 : 0]!;
  return outcomeOf(decider, cached.state, cached.version, decided, plan.stored(inserted.rows as Parameters<typeof plan.stored>[0]));
}

function takesClaims<E extends DomainEvent, S>(spec: CommandSpec<unknown, E, S>, decided: readonly E[], state: S): boolean {
  if (!spec.claims) return false;
  let before = state;
  for (const event of decided) {
    const changes = spec.claims(event, before);
    if (changes.acquire.length > 0 || changes.release.length > 0) return true;
    before = spec.decider.evolve(before, event);
  }
  return false;
}

/** Per projector, the event types it was found reading results for (record-projections.ts). */
const readsResults = new WeakMap<Projector, Set<string>>();
