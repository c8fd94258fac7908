import type { CompiledQuery, QueryResult } from 'kysely';
import type { Db } from '../../database/database.js';
import type { ClaimChanges, DomainEvent } from '../../domain/decider.js';
import { DomainError } from '../../domain/errors.js';
import { appendToStream, planAppend, type AppendInput, type AppendPlan } from '../../eventstore/store.js';
import type { StoredEvent } from '../../eventstore/types.js';
import { batchInTransaction } from '../../database/read-together.js';
import { guessToProve, WrongGuess } from './guesses.js';
import { appendInput, claimsOf, claimStatements, knownFold, outcomeOf, runInlineProjections } from './append-steps.js';
import { asPreconditionFailure } from './precondition.js';
import { recordProjections, UnrecordableProjection } from './record-projections.js';
import type { CommandContext, CommandSpec, Outcome, Writer } from './context.js';

/**
 * A command's whole transaction in one round trip to PostgreSQL: the appends and the inline
 * projections' statements go out as one batch (StatementBatch in src/database/pg-client.ts), which
 * commits whole or not at all. Each round trip costs Node and the database a wake-up, a
 * read and a write on both sides; a status change made five of them (BEGIN, INSERT,
 * UPDATE, COMMIT and authentication) and now makes one (see withWriter in src/http/kernel/auth.ts),
 * and a project's creation (its claims, its events, its owner's membership) one instead of ten.
 *
 * It applies to the commands of `specs` (committed together, in order) when nothing in the
 * transaction depends on what an earlier statement returns:
 * - each decision is made on the process's cached fold (or a new stream's initial state),
 *   without reading the stream (a concurrent append makes an INSERT fail on its expected
 *   version, and the caller then takes the ordinary path, which reads);
 * - each command is given, or built from rows read before the transaction
 *   (CommandSpec.optimistic: the statement that finds those rows unchanged goes first);
 * - the claims an event takes are taken by a statement that fails the batch when one is
 *   held by another stream;
 * - no inline projector of the events acts on what its statements return: they are recorded
 *   (record-projections.ts, which finds that out) and sent after the INSERT, in the same
 *   batch. Whether a projector reads a result can depend on the event (the cross-references
 *   projector reads only for a text that references something), so each event is recorded
 *   afresh: a refusal costs the projector's work up to its first read, and one event that
 *   reads does not send every later event of its type the slow way.
 * A precondition (handler.ts) goes first in the batch.
 * Otherwise — an outcome that appends nothing (it is confirmed against the log), a refusal,
 * a claim held by another stream, rows that changed — it answers `undefined` and the caller
 * runs the ordinary path, which decides again in a transaction and answers what it finds.
 */
export async function decideInOneRoundTrip(w: Writer, specs: readonly CommandSpec<any, any, any>[]): Promise<Outcome<unknown>[] | undefined> {
  const { ctx } = w;
  if (!ctx.oneRoundTrip) return undefined;
  const statements: CompiledQuery[] = [];
  /** Statements whose failure means "decide again in a transaction", not an error to report. */
  const redecideOn = new Set<number>();
  const planned: { spec: CommandSpec<any, any, any>; state: unknown; version: number; decided: readonly DomainEvent[]; plan: AppendPlan; insertAt: number }[] = [];
  const { precondition } = ctx;
  if (precondition) statements.push(precondition.statement);

  for (const spec of specs) {
    const command = typeof spec.command === 'function' ? spec.optimistic?.command : spec.command;
    const cached = knownFold(ctx, spec);
    if (command === undefined || !cached) return undefined;
    let decided: readonly DomainEvent[];
    try {
      decided = spec.decider.decide(command, cached.state);
    } catch (error) {
      if (error instanceof DomainError) return undefined;
      throw error;
    }
    if (decided.length === 0) return undefined;
    if (typeof spec.command === 'function') redecideOn.add(statements.push(spec.optimistic!.unchanged) - 1);
    for (const claims of claimsOf(spec, decided, cached.state)) {
      for (const statement of claimStatements(ctx.db, spec.streamId, claims)) redecideOn.add(statements.push(statement) - 1);
    }
    const projectors = ctx.inlineProjectors.filter((p) => decided.some((event) => p.handles.includes(event.type)));
    const plan = planAppend(ctx.db, appendInput(w, spec, decided, cached.version, cached.hash));
    const projections = await recordProjections(projectors, plan.pending());
    if (projections instanceof UnrecordableProjection) return undefined;
    planned.push({ spec, state: cached.state, version: cached.version, decided, plan, insertAt: statements.length });
    statements.push(plan.insert, ...projections);
  }

  let results: QueryResult<unknown>[];
  try {
    results = await ctx.oneRoundTrip(statements);
  } catch (error) {
    const failedAt = (error as { statementIndex?: number }).statementIndex;
    if (precondition && failedAt === 0) throw asPreconditionFailure(error);
    if (failedAt !== undefined && redecideOn.has(failedAt) && (error as { code?: string }).code === '22012') return undefined;
    throw error;
  }
  precondition?.held();
  return planned.map(({ spec, state, version, decided, plan, insertAt }) =>
    outcomeOf(spec.decider, state, version, decided, plan.stored(results[insertAt]!.rows as Parameters<typeof plan.stored>[0])),
  );
}

/** A claim another stream holds failed the ordinary path's batch (appendAndProject): the transaction runs again taking claims one by one, which answers the refusal. */
export class ClaimHeldInBatch extends Error {
  constructor() {
    super('a claim is held by another stream');
  }
}

/**
 * The ordinary path's claims, append and inline projections (handler.ts), after the proof of a
 * guess the command made in the transaction (guesses.ts), if it made one. On PostgreSQL, when
 * the projections can be recorded, they go out as one batch on the transaction's connection,
 * as decideInOneRoundTrip sends them: the guess's proof, the claims' statements
 * (claimStatements), the INSERT, the projections' statements and, when this is the
 * transaction's last append (`commit`), its COMMIT. One round trip instead of one per
 * statement; under the lock a proof takes (a scope's iid), the only one. A failed proof fails
 * the batch with WrongGuess, a claim held by another stream with ClaimHeldInBatch. With
 * `claimsApart`, or without a batch, the proof and then the claims are taken one by one first
 * (applyClaims, which answers a refusal), and without a batch the rest goes statement by
 * statement (and kysely commits).
 */
export async function appendAndProject(
  trx: Db,
  ctx: CommandContext,
  input: AppendInput,
  claims: { readonly changes: readonly ClaimChanges[]; readonly apart: boolean; apply(): Promise<void> },
  commit: boolean,
): Promise<StoredEvent[]> {
  const guess = guessToProve(trx);
  try {
    return await proveAppendAndProject(trx, ctx, input, claims, commit, guess?.proof ?? []);
  } catch (error) {
    guess?.abandoned();
    throw error;
  }
}

async function proveAppendAndProject(
  trx: Db,
  ctx: CommandContext,
  input: AppendInput,
  claims: { readonly changes: readonly ClaimChanges[]; readonly apart: boolean; apply(): Promise<void> },
  commit: boolean,
  proof: readonly CompiledQuery[],
): Promise<StoredEvent[]> {
  const types = input.events.map((event) => event.type);
  const projectors = ctx.inlineProjectors.filter((p) => types.some((type) => p.handles.includes(type)));
  const plan = ctx.oneRoundTrip ? planAppend(trx, input) : undefined;
  const recorded = plan && (await recordProjections(projectors, plan.pending()));
  const projections = recorded instanceof UnrecordableProjection ? undefined : recorded;
  const batched = plan && projections && !claims.apart;
  if (!batched && proof.length > 0) {
    await batchInTransaction(trx, proof).catch((error: unknown) => {
      throw dividedByZero(error) !== undefined ? new WrongGuess() : error;
    });
  }
  if (!plan || !projections) {
    await claims.apply();
    const stored = await appendToStream(trx, input);
    await runInlineProjections(trx, ctx.inlineProjectors, stored);
    return stored;
  }
  if (claims.apart) await claims.apply();
  const proved = batched ? proof : [];
  const claimed = batched ? claims.changes.flatMap((changes) => claimStatements(trx, input.streamId, changes)) : [];
  let results: QueryResult<unknown>[];
  try {
    results = await batchInTransaction(trx, [...proved, ...claimed, plan.insert, ...projections], { commit });
  } catch (error) {
    const failedAt = dividedByZero(error);
    if (failedAt !== undefined && failedAt < proved.length) throw new WrongGuess();
    if (failedAt !== undefined && failedAt < proved.length + claimed.length) throw new ClaimHeldInBatch();
    throw error;
  }
  return plan.stored(results[proved.length + claimed.length]!.rows as Parameters<typeof plan.stored>[0]);
}

/** The index in its batch of a statement that divided by zero (a claim held, a guess proved wrong); undefined for any other failure. */
function dividedByZero(error: unknown): number | undefined {
  const { statementIndex, code } = error as { statementIndex?: number; code?: string };
  return code === '22012' ? statementIndex : undefined;
}
