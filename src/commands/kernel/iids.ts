import { sql, type CompiledQuery, type Expression, type QueryResult } from 'kysely';
import type { Db } from '../../database/database.js';
import { perDatabase } from '../../database/after-commit.js';
import { batchInTransaction } from '../../database/read-together.js';
import { proveWithAppend } from './guesses.js';

/**
 * A per-scope iid counter (GitLab's InternalId): the table its projection keeps of the last
 * iid taken in each scope, that scope's column, and the advisory-lock key space creations of
 * one scope wait on each other in.
 */
export interface IidCounter {
  readonly table: 'epic_iids' | 'milestone_iids' | 'merge_request_iids' | 'issue_iids';
  readonly scope: 'group_id' | 'project_id';
  readonly lockSpace: number;
}

/**
 * The next iid of a scope, inside the creating command's transaction: concurrent creations in
 * the scope wait on one transaction lock, and the area claims the iid with its event, so no
 * two records of a scope ever share one and a deleted record's iid is never reused.
 */
export async function nextIid(trx: Db, counter: IidCounter, scopeId: number): Promise<number> {
  const taker = iidTaker(trx, counter, scopeId);
  if (taker.first.length > 0) await batchInTransaction(trx, taker.first);
  return (await taker.take(sql<null>`null`)).iid;
}

/**
 * The next iid of a scope in two steps, for a creation that has statements of its own to send
 * first: `first`, to send in the transaction's next round trip (or at once), then `take`, with
 * `alongside`, read in the same statement under the scope's lock: what the lock also guards (a
 * merge request's open duplicate: two creations never both find none), and `ahead`: statements
 * of the transaction sent before the lock is asked for.
 *
 * The iid is read under the scope's lock, or guessed. Read, the lock is held from the read
 * until the commit, across a round trip to Node and the event loop's delay under load (13 ms on
 * average at 80 merge requests opened per second in one project: its bound). So once this
 * process knows a scope's next iid it guesses it (IidGuesses), and `alongside` is guessed null:
 * `ahead`, the lock and the statement that proves the guess go out with the append
 * (guesses.ts), and the lock is held for PostgreSQL's work alone. A wrong guess (a creation of
 * another process, or one of this process that failed) rolls the transaction back, and it is
 * decided again, reading. A guessed creation holds a lock named by its iid from `first` on,
 * and its proof waits for its predecessor's before it asks for the scope's lock: creations
 * this process guessed in turn take the scope's lock in turn, whatever order their batches
 * reach the server in. Either way `ahead`'s results are not returned.
 */
export function iidTaker(trx: Db, counter: IidCounter, scopeId: number): IidTaker {
  const lock = sql`select pg_advisory_xact_lock(${counter.lockSpace}, ${scopeId})`.compile(trx);
  const lastIid = sql<number | null>`(select last_iid from ${sql.table(counter.table)} where ${sql.ref(counter.scope)} = ${scopeId})`;
  const known = iidGuesses.of(trx);
  const scope = `${counter.table} ${scopeId}`;
  const ownLock = (iid: number) => sql`select pg_advisory_xact_lock(${guessKey(scope, iid)})`.compile(trx);
  const guessedTake = <T>(guess: number, alongside: Expression<T | null>, ahead: readonly CompiledQuery[], first: readonly CompiledQuery[]) => {
    proveWithAppend(trx, {
      proof: [
        ...ahead,
        ...first,
        sql`select pg_advisory_xact_lock_shared(${guessKey(scope, guess - 1)})`.compile(trx),
        lock,
        sql`select 1 / (coalesce(${lastIid}, 0) = ${guess - 1} and (${alongside}) is null)::int`.compile(trx),
      ],
      abandoned: () => known.forget(scope),
    });
    return { iid: guess, alongside: null };
  };
  const early = known.take(scope);
  if (early !== undefined) return { first: [ownLock(early)], take: async (alongside, ahead = []) => guessedTake(early, alongside, ahead, []) };
  return {
    first: [],
    take: async <T>(alongside: Expression<T | null>, ahead: readonly CompiledQuery[] = []) => {
      // Known since `first` (a creation that read its iid meanwhile): guessed, its own lock taken with the proof.
      const late = known.take(scope);
      if (late !== undefined) return guessedTake(late, alongside, ahead, [ownLock(late)]);
      // Read. One round trip: the read is a statement of its own, so its snapshot is taken once the lock is held.
      known.reading(scope, 1);
      let results: QueryResult<unknown>[];
      try {
        results = await batchInTransaction(trx, [...ahead, lock, sql`select ${lastIid} as last_iid, (${alongside}) as alongside`.compile(trx)]);
      } finally {
        known.reading(scope, -1);
      }
      const row = results.at(-1)!.rows[0] as { last_iid: number | null; alongside: T | null };
      const iid = (row.last_iid ?? 0) + 1;
      known.read(scope, iid);
      return { iid, alongside: row.alongside };
    },
  };
}

export interface IidTaker {
  /** Statements to send before `take`: the guess's own lock. */
  readonly first: readonly CompiledQuery[];
  take<T>(alongside: Expression<T | null>, ahead?: readonly CompiledQuery[]): Promise<{ iid: number; alongside: T | null }>;
}

/** The advisory lock a guessed creation of `iid` in a scope holds (a bigint key: its own key space). */
const guessKey = (scope: string, iid: number) => sql`hashtextextended(${`${scope} ${iid}`}, 0)`;

/**
 * What this process knows of each scope's next iid, to guess it: nothing at first and after a
 * guess was abandoned; after a creation reads its iid under the lock, the next one after it
 * and after those of the creations of this process still waiting for the lock to read theirs.
 */
class IidGuesses {
  private readonly next = new Map<string, number>();
  private readonly waiting = new Map<string, number>();

  take(scope: string): number | undefined {
    const iid = this.next.get(scope);
    if (iid !== undefined) this.next.set(scope, iid + 1);
    return iid;
  }

  reading(scope: string, change: 1 | -1): void {
    const waiting = (this.waiting.get(scope) ?? 0) + change;
    if (waiting === 0) this.waiting.delete(scope);
    else this.waiting.set(scope, waiting);
  }

  read(scope: string, iid: number): void {
    if (!this.next.has(scope)) this.next.set(scope, iid + 1 + (this.waiting.get(scope) ?? 0));
  }

  forget(scope: string): void {
    this.next.delete(scope);
  }

  clear(): void {
    this.next.clear();
    this.waiting.clear();
  }
}

const iidGuesses = perDatabase(() => new IidGuesses());
