import { sql } from 'kysely';
import type { Db } from '../../database/database.js';

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
  await sql`select pg_advisory_xact_lock(${counter.lockSpace}, ${scopeId})`.execute(trx);
  const { rows } = await sql<{ last_iid: number }>`select last_iid from ${sql.table(counter.table)} where ${sql.ref(counter.scope)} = ${scopeId}`.execute(trx);
  return (rows[0]?.last_iid ?? 0) + 1;
}
