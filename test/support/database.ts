import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, inject, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/database/database.js';
import { TEST_DATABASE_DIR, copyTemplate, withDatabase } from './global-setup.js';
import { POSTGRES_ONLY } from './skipped-reporter.js';

export const onPostgres = Boolean(process.env.DATABASE_URL);

/**
 * Tests that need what only a PostgreSQL server has (concurrent sessions, advisory locks,
 * NOTIFY across processes): run with DATABASE_URL, skipped on the embedded database and
 * counted aloud at the end of the run (skipped-reporter.ts).
 */
export const describeOnPostgres = (name: string, fn: () => void) => describe.runIf(onPostgres)(`${name} ${POSTGRES_ONLY}`, fn);
export const itOnPostgres = (name: string, fn: () => Promise<void> | void, timeout?: number) => it.runIf(onPostgres)(`${name} ${POSTGRES_ONLY}`, fn, timeout);

/**
 * A fresh, migrated, empty database of its own (a PostgreSQL clone of the run's template, or
 * a copy of the PGlite template directory): the environment that points a child `forgelog`
 * process at it, how to open it here, and how to drop it.
 */
export interface TestStore {
  readonly env: Readonly<Record<string, string>>;
  open(options?: { poolSize?: number }): Promise<DatabaseHandle>;
  dispose(): Promise<void>;
}

export async function freshTestStore(label = 'db'): Promise<TestStore> {
  const suffix = randomBytes(5).toString('hex');
  const url = process.env.DATABASE_URL;
  if (url) {
    const template = inject('postgresTemplate');
    const name = `${template}_f${suffix}`;
    // A test database needs its commits atomic and visible, not on disk before they return:
    // waiting for each commit's WAL flush left the workers idle most of the PostgreSQL run
    // (members.test.ts: 19 s of tests with it, 9 s without). Every session on it, child
    // processes' included, takes the setting; nothing else on the server does.
    await adminQuery(url, `create database "${name}" template "${template}"`, `alter database "${name}" set synchronous_commit = off`);
    const databaseUrl = withDatabase(url, name);
    return {
      env: { DATABASE_URL: databaseUrl },
      open: (options = {}) => openDatabase({ databaseUrl, poolSize: options.poolSize ?? 10 }),
      // Not waited for: a drop took the file's worker 1–5 s (PostgreSQL unlinks the files on a
      // disk mounted with `discard`). What a worker leaves undropped, the run's teardown drops.
      dispose: async () => void adminQuery(url, `drop database if exists "${name}" with (force)`).catch(() => {}),
    };
  }
  const dir = join(TEST_DATABASE_DIR, `${label}-${suffix}`);
  copyTemplate(inject('pgliteTemplateDir'), dir);
  return {
    env: { FORGELOG_DATA_DIR: dir },
    open: () => openDatabase({ dataDir: dir }),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A fresh database for one test file, opened here; closing it drops it. */
export async function openTestDatabase(options: { poolSize?: number } = {}): Promise<DatabaseHandle> {
  const store = await freshTestStore();
  const handle = await store.open(options);
  return {
    ...handle,
    async close() {
      await handle.close();
      await store.dispose();
    },
  };
}

/** Statements on the server's `postgres` database (create or drop a database), one after another on one connection. */
export async function adminQuery(url: string, ...queries: string[]) {
  const admin = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await admin.connect();
  try {
    for (const query of queries) await admin.query(query);
  } finally {
    await admin.end();
  }
}
