/** What the phases set up alike: databases on the bench's server, ids, work in parallel. */
import { sql } from 'kysely';
import pg from 'pg';
import type { Db } from '../../src/database/database.js';
import { log } from './meters.js';
import { KEEP, SERVER_URL } from './settings.js';

/** What runs at the end, in reverse order (also on Ctrl-C). */
export type Cleanups = (() => Promise<void> | void)[];

/** Runs fn the first time only (cleanups may also run early). */
export function once(fn: () => Promise<unknown> | unknown): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= Promise.resolve().then(fn).then(() => undefined));
}

/** Runs fn over the items, `concurrency` at a time. */
export async function inParallel<T>(items: readonly T[], concurrency: number, fn: (item: T, index: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

// ───────────────────────────── Databases ─────────────────────────────

export function databaseUrl(base: string, database: string): string {
  const url = new URL(base);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function withAdmin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl(SERVER_URL, 'postgres') });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Takes `count` consecutive ids from a sequence (setval past them); returns the first. */
export async function reserveIds(db: Db, sequence: string, count: number): Promise<number> {
  const { rows } = await sql<{ last: string }>`select setval(${sequence}, nextval(${sequence}) + ${Math.max(1, count) - 1}) as last`.execute(db);
  return Number(rows[0]!.last) - Math.max(1, count) + 1;
}

/**
 * Creates a database on the bench's server; `drop` (run once, also pushed to `cleanups`)
 * drops it, or keeps it with BENCH_KEEP=1.
 */
export async function createDatabase(name: string, cleanups: Cleanups): Promise<{ url: string; serverVersion: string; drop: () => Promise<void> }> {
  const serverVersion = await withAdmin(async (admin) => {
    await admin.query(`create database ${name}`);
    return (await admin.query<{ server_version: string }>('show server_version')).rows[0]!.server_version;
  });
  const drop = once(async () => {
    if (KEEP) return void log(`kept database ${name} (BENCH_KEEP=1): psql -h 127.0.0.1 -U postgres ${name}; drop it with \`dropdb -h 127.0.0.1 -U postgres ${name}\``);
    await withAdmin((admin) => admin.query(`drop database if exists ${name} with (force)`));
    log(`dropped database ${name}`);
  });
  cleanups.push(drop);
  return { url: databaseUrl(SERVER_URL, name), serverVersion, drop };
}
