import type { Db } from './database.js';

/**
 * Work that may run only once a transaction has committed: a process-wide cache may keep what
 * a transaction read only when none of it can be undone by a rollback (its own uncommitted
 * rows). `afterCommit` runs the work at once outside a transaction, and otherwise keeps it
 * for the transaction's Db; whoever commits the transaction runs it (`transactionCommitted`:
 * the command kernel, src/commands/kernel/handler.ts). Work kept for a transaction that rolls
 * back, or that nobody reports, goes with the transaction object.
 */
const pending = new WeakMap<object, (() => void)[]>();

export function afterCommit(db: Db, work: () => void): void {
  if (!db.isTransaction) return work();
  const kept = pending.get(db);
  if (kept) kept.push(work);
  else pending.set(db, [work]);
}

/** Runs the work kept for a transaction that has just committed. */
export function transactionCommitted(trx: Db): void {
  const kept = pending.get(trx);
  if (!kept) return;
  pending.delete(trx);
  for (const work of kept) work();
}
