import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import type { ClaimChanges, ClaimRefusal, DomainEvent } from '../../domain/decider.js';
import { DomainError, conflict, resourceLocked } from '../../domain/errors.js';
import { GENESIS_HASH, readStream } from '../../eventstore/store.js';
import { isStalePreparedPlan } from '../../database/pg-client.js';
import { transactionCommitted } from '../../database/after-commit.js';
import { appendInput, claimsOf, knownFold, outcomeOf, releaseClaim, takeClaims } from './append-steps.js';
import { appendAndProject, ClaimHeldInBatch, decideInOneRoundTrip } from './one-round-trip.js';
import { checkPrecondition } from './precondition.js';
import { WrongGuess } from './guesses.js';
import type { CommandContext, CommandResult, CommandSpec, DeferredSpecs, Outcome, Writer } from './context.js';

const MAX_ATTEMPTS = 12;

/**
 * The one place that appends: read the stream, fold, decide, take claims, append at the
 * expected version, run inline projections — all in one transaction — then notify.
 * Concurrency conflicts are retried by re-reading and re-deciding.
 */
export async function handleCommand<C, E extends DomainEvent, S>(
  w: Writer,
  spec: CommandSpec<C, E, S>,
): Promise<CommandResult<S>> {
  const [result] = await handleCommands(w, [spec]);
  return result as CommandResult<S>;
}

/**
 * Several commands on different streams that must commit together or not at all (a new
 * group and its first owner's membership), their events carrying the writer's metadata.
 * Each stream keeps its own expected version. Deferred specs are built in the transaction,
 * in their place among the others (a merge request's merge, then the refs it moves); the
 * results are those of every command decided, in order.
 */
export async function handleCommands(
  w: Writer,
  specs: readonly (CommandSpec<any, any, any> | DeferredSpecs)[],
): Promise<CommandResult<unknown>[]> {
  const { ctx } = w;
  const known = specs.filter(isKnown);
  // A cached fold another process has appended past is still the fold of the stream's first
  // events (the log only grows): after a conflict the streams are read from there, not from
  // their start, so a conflict on a long stream costs its new events only.
  let readStreams = false;
  let claimsApart = false;
  if (known.length === specs.length) {
    try {
      const sent = await decideInOneRoundTrip(w, known);
      if (sent) return committed(ctx, known.map((spec, i) => ({ spec, outcome: sent[i]! })));
    } catch (error) {
      if (!isConcurrencyConflict(error)) throw error;
      readStreams = true; // another process appended to a stream: the ordinary path below reads it
    }
  }
  for (let attempt = 1; ; attempt++) {
    try {
      let transaction: Db | undefined;
      const decided = await ctx.db.transaction().execute(async (trx) => {
        transaction = trx;
        if (readStreams) await lockStreams(trx, known);
        if (ctx.precondition) await checkPrecondition(trx, ctx.precondition);
        const out: Decided[] = [];
        for (const [i, item] of specs.entries()) {
          const built = isKnown(item) ? [item] : await item.deferred(trx);
          if (readStreams && !isKnown(item)) await lockStreams(trx, built);
          for (const [j, spec] of built.entries()) {
            const last = i === specs.length - 1 && j === built.length - 1;
            out.push({ spec, outcome: await decideAndAppend(trx, w, spec, !readStreams, claimsApart, last) });
          }
        }
        return out;
      });
      transactionCommitted(transaction!);
      return committed(ctx, decided);
    } catch (error) {
      if (error instanceof ClaimHeldInBatch && !claimsApart) {
        claimsApart = true;
        continue;
      }
      if (!isConcurrencyConflict(error)) throw error;
      // GitLab answers a StaleObjectError or a lock it could not take the same way.
      if (attempt >= MAX_ATTEMPTS) throw resourceLocked();
      readStreams = true;
      // A stale cache or plan or a wrong guess is retried at once; writers contending for a stream back off.
      if (!(error instanceof StaleCachedState) && !(error instanceof WrongGuess) && !isStalePreparedPlan(error)) await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * attempt));
    }
  }
}

const isKnown = (item: CommandSpec<any, any, any> | DeferredSpecs): item is CommandSpec<any, any, any> => !('deferred' in item);

interface Decided {
  readonly spec: CommandSpec<any, any, any>;
  readonly outcome: Outcome<unknown>;
}

/** The advisory lock class of the streams a retry writes ('strm'). */
const STREAM_LOCK = 0x7374726d;

/**
 * A retry after a conflict first locks its streams, so that writers who lost a race on one
 * stream queue behind each other instead of racing again (32 clients writing one user's
 * status at once lost 23 % of their requests to 409 after twelve attempts; GitLab answers each
 * in turn). A first attempt takes no lock: it decides on the cached fold and writes in one
 * round trip. Keys in one order, so that retries of several streams do not deadlock; a hash
 * two streams share only makes them wait for each other.
 */
async function lockStreams(trx: Db, specs: readonly CommandSpec<any, any, any>[]): Promise<void> {
  const streams = [...new Set(specs.map((spec) => spec.streamId))];
  await sql`select pg_advisory_xact_lock(${STREAM_LOCK}, k)
              from (select distinct hashtext(s) as k from unnest(${streams}::text[]) as s order by k) keys`.execute(trx);
}

/** After the commit: the streams' folds into the cache, a wake-up naming what was appended. */
function committed(ctx: CommandContext, decided: readonly Decided[]): CommandResult<unknown>[] {
  for (const { spec, outcome } of decided) ctx.streamCache?.set(spec.decider, spec.streamId, outcome.head);
  const appended = decided.flatMap(({ outcome }) => outcome.result.events.map((event) => event.type));
  if (appended.length > 0) ctx.notifier.appended(appended);
  return decided.map(({ outcome }) => outcome.result);
}

async function decideAndAppend<C, E extends DomainEvent, S>(
  trx: Db,
  w: Writer,
  spec: CommandSpec<C, E, S>,
  /** Whether the stream may be decided on without reading it (a cached or new stream's fold). */
  unreadAllowed: boolean,
  /** Whether claims are taken one by one (after a batch found one held: ClaimHeldInBatch). */
  claimsApart: boolean,
  /** Whether this is the transaction's last append: its batch may end with the COMMIT. */
  commit: boolean,
): Promise<Outcome<S>> {
  const { ctx } = w;
  const { decider } = spec;
  const cached = knownFold(ctx, spec);
  // With a cached fold (or a new stream's) the first attempt decides without reading the
  // stream: appending at the expected version fails if another process appended meanwhile,
  // and the retry reads. An outcome that appends nothing (no change, a refusal) is confirmed
  // against the log.
  const unread = unreadAllowed && cached !== undefined;
  const tail = unread ? [] : await readStream(trx, spec.streamId, cached?.version ?? 0);
  let state: S = cached ? cached.state : await predecessorFold(trx, spec);
  for (const event of tail) state = decider.evolve(state, event as unknown as E);
  const version = tail.at(-1)?.streamVersion ?? cached?.version ?? 0;
  const headHash = tail.at(-1)?.hash ?? cached?.hash ?? GENESIS_HASH;
  const confirm = async () => {
    if (unread && (await streamMovedPast(trx, spec.streamId, version))) throw new StaleCachedState(spec.streamId);
  };

  const command = typeof spec.command === 'function' ? await (spec.command as (trx: Db) => Promise<C>)(trx) : spec.command;
  let decided: readonly E[];
  try {
    decided = decider.decide(command, state);
    if (decided.length === 0) {
      await confirm();
      return { result: { state, version, events: [] }, head: { version, state, hash: headHash } };
    }
  } catch (error) {
    if (error instanceof DomainError) await confirm();
    throw error;
  }

  const changes = claimsOf(spec, decided, state);
  const claims = {
    changes,
    apart: claimsApart,
    apply: async () => {
      try {
        for (const change of changes) await applyClaims(trx, spec.streamId, change, spec.claimRefusal);
      } catch (error) {
        if (error instanceof DomainError) await confirm();
        throw error;
      }
    },
  };
  const stored = await appendAndProject(trx, ctx, appendInput(w, spec, decided, version, headHash), claims, commit);
  return outcomeOf(decider, state, version, decided, stored);
}

/** A stream's initial state, with the events of the stream it was split from folded in (CommandSpec.predecessor). */
async function predecessorFold<C, E extends DomainEvent, S>(trx: Db, spec: CommandSpec<C, E, S>): Promise<S> {
  let state = spec.decider.initialState(spec.key);
  if (spec.predecessor === undefined) return state;
  for (const event of await readStream(trx, spec.predecessor, 0)) state = spec.decider.evolve(state, event as unknown as E);
  return state;
}

async function applyClaims(trx: Db, streamId: string, changes: ClaimChanges, refusal?: ClaimRefusal) {
  for (const released of changes.release) await releaseClaim(trx, streamId, released).execute();
  if (changes.acquire.length === 0) return;
  const taken = await takeClaims(trx, streamId, changes.acquire).execute();
  const held = new Set(taken.map((row) => `${row.kind}\u0000${row.key}`));
  const refused = changes.acquire.find((c) => !held.has(`${c.kind}\u0000${c.key}`));
  if (refused) throw refusal ? refusal(refused) : conflict(refused.conflictMessage);
}

/** The first attempt decided on a cached fold that another process's append made stale. */
class StaleCachedState extends Error {
  constructor(readonly streamId: string) {
    super(`stream ${streamId} moved past its cached state`);
  }
}

async function streamMovedPast(trx: Db, streamId: string, version: number): Promise<boolean> {
  const row = await trx.selectFrom('events').select('stream_version').where('stream_id', '=', streamId).where('stream_version', '>', version).limit(1).executeTakeFirst();
  return row !== undefined;
}

function isConcurrencyConflict(error: unknown): boolean {
  if (error instanceof StaleCachedState || error instanceof WrongGuess || isStalePreparedPlan(error)) return true;
  const e = error as { code?: string; constraint?: string; message?: string } | undefined;
  if (!e) return false;
  if (e.code === '40001' || e.code === '40P01') return true;
  return e.code === '23505' && (e.constraint === 'events_stream_version_unique' || /events_stream_version_unique/.test(e.message ?? ''));
}

/** Allocates the next integer id of a resource kind from its sequence. */
export async function nextId(db: Db, sequence: string): Promise<number> {
  const { rows } = await sql<{ id: string }>`select nextval(${sequence}) as id`.execute(db);
  return Number(rows[0]!.id);
}
