import type { Db } from './database.js';

/**
 * Work that may run only once a transaction has committed: a process-wide cache may keep what
 * a transaction read only when none of it can be undone by a rollback (its own uncommitted
 * rows). `afterCommit` runs the work at once outside a transaction, and otherwise keeps it
 * for the transaction's Db; whoever commits the transaction runs it (`transactionCommitted`:
 * the command kernel, src/commands/kernel/handler.ts). Work kept for a transaction that rolls
 * back, or that nobody reports, goes with the transaction object.
 *
 * Inside one transaction around a whole request (inOneTransaction, src/database/savepoints.ts)
 * a command's transaction is a savepoint, and its Db and the request's are not transactions
 * to kysely: their work waits for the outer commit instead (`holdUntilCommitted`). They are
 * told apart by their dialect's adapter, which the request's Db and every transaction opened
 * from it share.
 */
const pending = new WeakMap<object, (() => void)[]>();
const heldByAdapter = new WeakMap<object, (() => void)[]>();
const aliases = new WeakMap<object, object>();

/**
 * What stands for a Db's database in the process's caches: its dialect's adapter, which every
 * transaction opened from it shares; a request's Db in one transaction stands for the handle
 * it was opened on (holdUntilCommitted). A process serves one database, but tests and
 * `events import` hold several, whose projects share ids.
 */
export function databaseKey(db: Db): object {
  const adapter = db.getExecutor().adapter;
  return aliases.get(adapter) ?? adapter;
}

export function afterCommit(db: Db, work: () => void): void {
  const held = heldByAdapter.get(db.getExecutor().adapter);
  if (held) return void held.push(work);
  if (!db.isTransaction) return work();
  const kept = pending.get(db);
  if (kept) kept.push(work);
  else pending.set(db, [work]);
}

/**
 * A process cache of each database's committed state: `of(db)` is the one of db's database
 * (databaseKey), made by `create` the first time; the tests' `forget(db)` empties it.
 */
export function perDatabase<T extends { clear(): void }>(create: () => T): { of(db: Db): T; forget(db: Db): void } {
  const caches = new WeakMap<object, T>();
  const of = (db: Db): T => {
    const key = databaseKey(db);
    let cache = caches.get(key);
    if (!cache) caches.set(key, (cache = create()));
    return cache;
  };
  return { of, forget: (db) => of(db).clear() };
}

/** Runs the work kept for a transaction that has just committed. */
export function transactionCommitted(trx: Db): void {
  const kept = pending.get(trx);
  if (!kept) return;
  pending.delete(trx);
  for (const work of kept) work();
}

/**
 * Holds the work of `db` (opened on `handle`'s connection) and of every transaction opened
 * from it until the returned function runs it, once the transaction they all belong to has
 * committed; dropped with `db` otherwise.
 */
export function holdUntilCommitted(db: Db, handle: Db): () => void {
  const held: (() => void)[] = [];
  heldByAdapter.set(db.getExecutor().adapter, held);
  aliases.set(db.getExecutor().adapter, databaseKey(handle));
  return () => {
    for (const work of held.splice(0)) work();
  };
}
