import { sql, type CompiledQuery, type Expression, type QueryResult } from 'kysely';
import type { Db } from '../../database/database.js';
import { batchInTransaction } from '../../database/read-together.js';

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
  return (await nextIidWith(trx, counter, scopeId, sql<null>`null`)).iid;
}

/**
 * nextIid and, read in the same statement under the scope's lock, `alongside`: what the lock
 * also guards (a merge request's open duplicate: two openings never both find none). `ahead`:
 * statements of the transaction sent in the same round trip before the lock is asked for
 * (their results, in order).
 */
export async function nextIidWith<T>(
  trx: Db,
  counter: IidCounter,
  scopeId: number,
  alongside: Expression<T>,
  ahead: readonly CompiledQuery[] = [],
): Promise<{ iid: number; alongside: T; ahead: QueryResult<unknown>[] }> {
  // One round trip: the read is a statement of its own, so its snapshot is taken once the lock is held.
  const results = await batchInTransaction(trx, [
    ...ahead,
    sql`select pg_advisory_xact_lock(${counter.lockSpace}, ${scopeId})`.compile(trx),
    sql`select (select last_iid from ${sql.table(counter.table)} where ${sql.ref(counter.scope)} = ${scopeId}) as last_iid, (${alongside}) as alongside`.compile(trx),
  ]);
  const row = results.at(-1)!.rows[0] as { last_iid: number | null; alongside: T };
  return { iid: (row.last_iid ?? 0) + 1, alongside: row.alongside, ahead: results.slice(0, ahead.length) };
}
