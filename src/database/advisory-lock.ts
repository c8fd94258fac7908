import type pg from 'pg';

/** First key of every forgelog session advisory lock ('flog'); the second is hashtext(name). */
export const ADVISORY_LOCK_CLASS = 0x666c6f67;

/**
 * Waits for the session advisory lock `name` on a connection of its own, and holds it until
 * the returned function releases it (and the connection). Processes sharing one PostgreSQL
 * database queue here; a connection lost meanwhile loses the lock with it.
 */
export async function holdSessionLock(pool: pg.Pool, name: string): Promise<() => Promise<void>> {
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1, hashtext($2))', [ADVISORY_LOCK_CLASS, name]);
  } catch (error) {
    client.release(true);
    throw error;
  }
  return async () => {
    try {
      await client.query('select pg_advisory_unlock($1, hashtext($2))', [ADVISORY_LOCK_CLASS, name]);
      client.release();
    } catch {
      client.release(true);
    }
  };
}
