import { accessSync, constants, cpSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openDatabase, type DatabaseHandle } from '../../src/database/database.js';
import { migrateToLatest } from '../../src/database/migrate.js';
import { rebuildProjections } from '../../src/projections/rebuild.js';
import { PROJECTORS } from '../../src/projections/registry.js';
import { createReplayScratch } from './replay-scratch.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** PGlite: a migrated data directory each test file copies. */
    pgliteTemplateDir: string;
    /** PostgreSQL: a migrated database each test file clones (CREATE DATABASE … TEMPLATE). */
    postgresTemplate: string;
  }
}

export const TEST_DATA_DIR = resolve('.test-data');

/**
 * Where the embedded databases of a run live: FORGELOG_TEST_DATABASE_DIR, else a folder on
 * /dev/shm (tmpfs) when there is one, else TEST_DATA_DIR. Each test file copies a migrated
 * template of 1,500 files and removes it at its end; on this machine's disk (ext4 mounted
 * with `discard`) the removal alone was 8 % of a file's CPU time.
 */
export const TEST_DATABASE_DIR = process.env.FORGELOG_TEST_DATABASE_DIR ?? (writable('/dev/shm') ? '/dev/shm/forgelog-tests' : TEST_DATA_DIR);

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Databases a run that died left behind (its files were never disposed): removed once they
 * are a day old, so that runs going on at the same time keep theirs and memory does not fill.
 */
function removeAbandoned(dir: string) {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    try {
      if (statSync(path).mtimeMs < dayAgo) rmSync(path, { recursive: true, force: true });
    } catch {}
  }
}

/**
 * Migrates once per run: a PGlite template directory (new PGlite databases take ~10 s to
 * create, a copy ~1 s to open), or, with DATABASE_URL, that database itself as the template.
 */
export default async function setup(project: TestProject) {
  mkdirSync(TEST_DATA_DIR, { recursive: true });
  mkdirSync(TEST_DATABASE_DIR, { recursive: true });
  if (TEST_DATABASE_DIR !== TEST_DATA_DIR) removeAbandoned(TEST_DATABASE_DIR);
  // Each test server's close() records there which projectors its log exercised (server.ts): this run's only.
  rmSync(join(TEST_DATA_DIR, 'replay-coverage'), { recursive: true, force: true });
  const url = process.env.DATABASE_URL;
  if (url) {
    const template = new URL(url).pathname.slice(1);
    const handle = await openDatabase({ databaseUrl: url, poolSize: 4 });
    await prepareTemplate(handle);
    // The replay check's copies of the read tables, made once here rather than per test server (replay.ts).
    await createReplayScratch(handle.db);
    await handle.close();
    project.provide('postgresTemplate', template);
    project.provide('pgliteTemplateDir', '');
    return async () => {
      const admin = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
      await admin.connect();
      const { rows } = await admin.query<{ datname: string }>('select datname from pg_database where datname like $1', [`${template}_f%`]);
      for (const row of rows) await admin.query(`drop database if exists "${row.datname}" with (force)`);
      await admin.end();
    };
  }
  const dir = join(TEST_DATABASE_DIR, `template-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  const handle = await openDatabase({ dataDir: dir });
  await prepareTemplate(handle);
  await handle.close();
  project.provide('pgliteTemplateDir', dir);
  project.provide('postgresTemplate', '');
  return () => rmSync(dir, { recursive: true, force: true });
}

/**
 * Migrates the template and builds every projection once, on its empty log, as a server's
 * worker does at its first start (ensureCurrent in src/worker/runner.ts). Without the second
 * step every test server rebuilt all of them (shadow tables, indexes, swaps): 1.5–2.5 s of
 * each file's start on PostgreSQL, about a third of a suite's time.
 */
async function prepareTemplate(handle: DatabaseHandle) {
  await migrateToLatest(handle.db);
  await rebuildProjections(handle, PROJECTORS);
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export function copyTemplate(from: string, to: string) {
  cpSync(from, to, { recursive: true });
}
