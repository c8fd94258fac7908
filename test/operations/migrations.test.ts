import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Migrator, sql, type Kysely, type Migration } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { StartupError } from '../../src/config.js';
import { openDatabase, type DatabaseHandle } from '../../src/database/database.js';
import { migrateToLatest } from '../../src/database/migrate.js';
import { adminQuery, itOnPostgres } from '../support/database.js';
import { withDatabase } from '../support/global-setup.js';

/**
 * migrations/ holds one file per area; databases migrated before that hold the records of
 * the first layout (0001–0011, kept verbatim in first-layout-migrations/ as deployed
 * databases have them). src/database/migrate.ts renames those records; the schema must not move.
 */

const FIRST_LAYOUT_DIR = join(dirname(fileURLToPath(import.meta.url)), 'first-layout-migrations');
const PER_AREA = ['0012_kernel', '0013_users', '0014_namespaces', '0015_projects', '0016_members'];

/** The first layout's migrator, as forgelog ran it then (imported here: vitest compiles the TypeScript). */
const firstLayout = (db: Kysely<any>) =>
  new Migrator({
    db,
    allowUnorderedMigrations: true,
    provider: {
      getMigrations: async () =>
        Object.fromEntries(
          await Promise.all((await readdir(FIRST_LAYOUT_DIR)).map(async (file) => [basename(file, '.ts'), (await import(join(FIRST_LAYOUT_DIR, file))) as Migration])),
        ),
    },
  });

describe('migrations, one file per area', () => {
  let fresh: DatabaseHandle;
  let freshSchema: string[];
  let applied: string[];

  beforeAll(async () => {
    fresh = await emptyDatabase();
    applied = await migrateToLatest(fresh.db);
    freshSchema = await schemaOf(fresh.db);
  });
  afterAll(() => fresh?.close());

  it('migrate an empty database, the kernel first, then each area', async () => {
    expect(applied.slice(0, PER_AREA.length)).toEqual(PER_AREA);
    // The seals' append-only triggers (0023), as the events table's (0012_kernel).
    expect(applied).toContain('0023_event_seals_append_only');
    const triggers = await sql<{ name: string }>`select tgname as name from pg_trigger where tgrelid = 'event_seals'::regclass and not tgisinternal order by tgname`.execute(fresh.db);
    expect(triggers.rows.map((r) => r.name)).toEqual(['event_seals_immutable', 'event_seals_no_truncate']);
    expect(await recordedNames(fresh.db)).toEqual(applied);
    expect(await migrateToLatest(fresh.db)).toEqual([]);
    // The instance keys: the application settings', the hooks' and the integrations' secrets, the stored idempotent answers', the runners tokens'.
    expect((await sql<{ name: string }>`select name from instance_keys order by name`.execute(fresh.db)).rows).toEqual([
      { name: 'application_settings' },
      { name: 'hooks' },
      { name: 'idempotency' },
      { name: 'integrations' },
      { name: 'runners_token' },
    ]);
  });

  it('upgrade a database of the first layout in place: its records renamed, its schema and instance key untouched', async () => {
    const old = await emptyDatabase();
    try {
      const { error } = await firstLayout(old.db).migrateToLatest();
      expect(error).toBeUndefined();
      const key = await runnersKey(old.db);

      const upgraded = await migrateToLatest(old.db);
      // Nothing of the per-area files ran again: the first layout already made their schema.
      expect(upgraded.filter((name) => PER_AREA.includes(name))).toEqual([]);
      expect(await recordedNames(old.db)).toEqual([...PER_AREA, ...upgraded].sort());
      expect(await schemaOf(old.db)).toEqual(freshSchema);
      expect(await runnersKey(old.db)).toBe(key);
      expect(await migrateToLatest(old.db)).toEqual([]);
    } finally {
      await old.close();
    }
  });

  it('refuse a database of the first layout that an older forgelog left incomplete, and change nothing', async () => {
    const old = await emptyDatabase();
    try {
      const { error } = await firstLayout(old.db).migrateTo('0005_groups');
      expect(error).toBeUndefined();
      const before = await recordedNames(old.db);

      const refused = await migrateToLatest(old.db).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(StartupError);
      expect((refused as Error).message).toBe(
        'the database was migrated by an older forgelog and lacks its migrations 0009_event_seals, 0010_list_indexes, 0011_projection_stream_versions: ' +
          'migrate it first with a forgelog from before the migrations per area (`forgelog migrate`), then with this one',
      );
      expect(await recordedNames(old.db)).toEqual(before);
    } finally {
      await old.close();
    }
  });

  itOnPostgres('upgrade a database of the first layout from two processes starting at once', async () => {
    const old = await emptyDatabase();
    const second = await openDatabase({ databaseUrl: old.url!, poolSize: 2 });
    try {
      const { error } = await firstLayout(old.db).migrateToLatest();
      expect(error).toBeUndefined();
      await Promise.all([migrateToLatest(old.db), migrateToLatest(second.db)]);
      // Every migration once: the renamed records and the areas' files after them.
      expect(await recordedNames(old.db)).toEqual([...applied].sort());
      expect(await schemaOf(old.db)).toEqual(freshSchema);
    } finally {
      await second.close();
      await old.close();
    }
  });
});

/** A database with nothing in it: a new PostgreSQL database, or an in-memory PGlite. */
async function emptyDatabase(): Promise<DatabaseHandle & { url?: string }> {
  const url = process.env.DATABASE_URL;
  if (!url) return openDatabase({ dataDir: 'memory://' });
  // Named like the run's clones, so the run's teardown drops it if this test does not.
  const name = `${inject('postgresTemplate')}_f${randomBytes(5).toString('hex')}`;
  await adminQuery(url, `create database "${name}" template template0`);
  const databaseUrl = withDatabase(url, name);
  const handle = await openDatabase({ databaseUrl, poolSize: 2 });
  return {
    ...handle,
    url: databaseUrl,
    async close() {
      await handle.close();
      await adminQuery(url, `drop database if exists "${name}" with (force)`);
    },
  };
}

async function recordedNames(db: Kysely<any>): Promise<string[]> {
  return (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)).rows.map((r) => r.name);
}

async function runnersKey(db: Kysely<any>): Promise<string> {
  return (await sql<{ secret: string }>`select secret from instance_keys where name = 'runners_token'`.execute(db)).rows[0]!.secret;
}

/**
 * The public schema as the catalog describes it, one line per object, without the
 * migrator's own tables: columns (position, type, default, nullability, identity),
 * constraints, indexes (with their storage options), sequences and what owns them,
 * triggers, functions, aggregates and table options.
 */
async function schemaOf(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ line: string }>`
    with tables as (
      select c.oid, c.relname from pg_class c
       where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and c.relname not like 'kysely\_%'
    )
    select format('column %s.%s #%s %s%s%s%s%s', t.relname, a.attname, a.attnum, format_type(a.atttypid, a.atttypmod),
                  case when a.attnotnull then ' not null' else '' end,
                  coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), ''),
                  case a.attidentity when 'a' then ' identity always' when 'd' then ' identity by default' else '' end,
                  case when a.attgenerated <> '' then ' generated' else '' end) as line
      from tables t join pg_attribute a on a.attrelid = t.oid and a.attnum > 0 and not a.attisdropped
      left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    union all
    select format('constraint %s.%s %s', t.relname, c.conname, pg_get_constraintdef(c.oid))
      from tables t join pg_constraint c on c.conrelid = t.oid
    union all
    select format('index %s', indexdef) from pg_indexes where schemaname = 'public' and tablename not like 'kysely\_%'
    union all
    select format('table options %s %s', t.relname, c.reloptions)
      from tables t join pg_class c on c.oid = t.oid where c.reloptions is not null
    union all
    select format('sequence %s %s start %s min %s max %s increment %s cache %s%s', sequencename, data_type, start_value,
                  min_value, max_value, increment_by, cache_size, case when cycle then ' cycle' else '' end)
      from pg_sequences where schemaname = 'public'
    union all
    select format('sequence %s owned by %s.%s (%s)', s.relname, t.relname, a.attname, d.deptype)
      from pg_depend d
      join pg_class s on s.oid = d.objid and s.relkind = 'S' and s.relnamespace = 'public'::regnamespace
      join pg_class t on t.oid = d.refobjid
      join pg_attribute a on a.attrelid = t.oid and a.attnum = d.refobjsubid
     where d.deptype in ('a', 'i')
    union all
    select format('trigger %s', pg_get_triggerdef(g.oid)) from tables t join pg_trigger g on g.tgrelid = t.oid and not g.tgisinternal
    union all
    select format('function %s', pg_get_functiondef(p.oid)) from pg_proc p where p.pronamespace = 'public'::regnamespace and p.prokind <> 'a'
    union all
    select format('aggregate %s(%s) sfunc %s stype %s initcond %s', p.proname, pg_get_function_arguments(p.oid), g.aggtransfn, format_type(g.aggtranstype, null), g.agginitval)
      from pg_proc p join pg_aggregate g on g.aggfnoid = p.oid where p.pronamespace = 'public'::regnamespace
    order by line`.execute(db);
  return rows.map((r) => r.line);
}
