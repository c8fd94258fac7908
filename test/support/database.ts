import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, inject, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../src/database.js';
import { TEST_DATA_DIR, copyTemplate, withDatabase } from './global-setup.js';
import { POSTGRES_ONLY } from './skipped-reporter.js';

export const onPostgres = Boolean(process.env.DATABASE_URL);

/**
 * Tests that need what only a PostgreSQL server has (concurrent sessions, advisory locks,
 * NOTIFY across processes): run with DATABASE_URL, skipped on the embedded database and
 * counted aloud at the end of the run (skipped-reporter.ts).
 */
export const describeOnPostgres = (name: string, fn: () => void) => describe.runIf(onPostgres)(`${name} ${POSTGRES_ONLY}`, fn);
export const itOnPostgres = (name: string, fn: () => Promise<void> | void, timeout?: number) => it.runIf(onPostgres)(`${name} ${POSTGRES_ONLY}`, fn, timeout);

/** A fresh, migrated database of its own for one test file (PGlite copy or PostgreSQL clone). */
export async function openTestDatabase(options: { poolSize?: number } = {}): Promise<DatabaseHandle> {
  const suffix = randomBytes(5).toString('hex');
  const url = process.env.DATABASE_URL;
  if (url) {
    const template = inject('postgresTemplate');
    const name = `${template}_f${suffix}`;
    const admin = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
    await admin.connect();
    await admin.query(`create database "${name}" template "${template}"`);
    await admin.end();
    const handle = await openDatabase({ databaseUrl: withDatabase(url, name), poolSize: options.poolSize ?? 10 });
    return {
      ...handle,
      async close() {
        await handle.close();
        const dropper = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
        await dropper.connect();
        await dropper.query(`drop database if exists "${name}" with (force)`);
        await dropper.end();
      },
    };
  }
  const dir = join(TEST_DATA_DIR, `db-${suffix}`);
  copyTemplate(inject('pgliteTemplateDir'), dir);
  const handle = await openDatabase({ dataDir: dir });
  return {
    ...handle,
    async close() {
      await handle.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
