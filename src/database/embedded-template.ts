import { copyFileSync, cpSync, existsSync, rmSync, renameSync, readFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { Kysely } from 'kysely';
import { PGliteDialect } from './pglite-dialect.js';
import { migrateToLatest } from './migrate.js';

/**
 * A new embedded data directory starts as a copy of a template: a data directory PGlite's
 * initdb made and every migration then present migrated. PGlite's initdb runs a second
 * PostgreSQL instance (and initdb's own WASM) beside the first, so running it in
 * `forgelog serve` peaked the first start at ~970 MB and left it idling at ~900 MB; from a
 * copy the first start is an ordinary restart (bench/memory.ts). Migrations still run on top
 * at every start: a template older than the migrations only has more of them to apply.
 * (A copied directory rather than PGlite's dumpDataDir/loadDataDir tarball: unpacking the
 * tarball inside the process holds it in memory, ~480 MB at the first start.)
 *
 * The template is made at install time — `npm ci` / `npm install` run the postinstall
 * script (scripts/pglite-template.ts) — under node_modules/.cache/forgelog, named after the
 * PGlite version, since a new PGlite may be a new PostgreSQL major. When it is missing
 * (installed with --ignore-scripts), the first new data directory makes it, once; when
 * node_modules is not writable, each new data directory runs initdb as before.
 */
const ROOT = packageRoot(dirname(fileURLToPath(import.meta.url)));

/** The directory of the nearest package.json above `dir`: the project's, from the sources and from the command's build (bin/compile.js) alike. */
function packageRoot(dir: string): string {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, 'package.json'))) return at;
    if (dirname(at) === at) return join(dir, '..', '..');
  }
}

export function templateDir(): string {
  return join(ROOT, 'node_modules', '.cache', 'forgelog', `pglite-${pgliteVersion()}-template`);
}

function pgliteVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

/** PGlite's mark of an initialised directory: it is copied last, so a half copy is not one. */
const MARK = 'PG_VERSION';

export function isInitialised(dataDir: string): boolean {
  return existsSync(join(dataDir, MARK));
}

/**
 * Fills a new data directory from the template (made first if missing). False when no
 * template can be made here: PGlite then runs initdb in the directory itself.
 */
export async function copyTemplateInto(dataDir: string): Promise<boolean> {
  const template = await ensureTemplate();
  if (!template) return false;
  cpSync(template, dataDir, { recursive: true, filter: (source) => source !== join(template, MARK) });
  copyFileSync(join(template, MARK), join(dataDir, MARK));
  return true;
}

/** The template directory, built now if missing; undefined when it cannot be written. */
export async function ensureTemplate(dir = templateDir()): Promise<string | undefined> {
  if (isInitialised(dir)) return dir;
  const draft = `${dir}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(dir), { recursive: true });
    rmSync(draft, { recursive: true, force: true });
    await buildTemplate(draft);
    // Renamed into place whole; another process that got there first keeps its own.
    if (!isInitialised(dir)) renameSync(draft, dir);
    return dir;
  } catch {
    return isInitialised(dir) ? dir : undefined;
  } finally {
    rmSync(draft, { recursive: true, force: true });
  }
}

/** initdb and every migration, in a directory of its own (no lock: nobody else knows it yet). */
export async function buildTemplate(dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const pglite = await PGlite.create(dir);
  const db = new Kysely<unknown>({ dialect: new PGliteDialect(pglite) });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
}
