import { readdir } from 'node:fs/promises';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DEFAULT_MIGRATION_TABLE, Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { StartupError } from '../config.js';

const HERE = fileURLToPath(import.meta.url);
const MIGRATIONS_DIR = join(dirname(HERE), '..', '..', 'migrations');
/** `.ts` from the sources (tsx, vitest), `.js` from the command's build (bin/compile.js), as this file is. */
const EXTENSION = extname(HERE);

/** Loads migrations/NNNN_name in name order. */
class DirectoryMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d+_/.test(f) && f.endsWith(EXTENSION) && !f.endsWith('.d.ts')).sort();
    const migrations: Record<string, Migration> = {};
    for (const file of files) {
      migrations[file.slice(0, -EXTENSION.length)] = (await import(pathToFileURL(join(MIGRATIONS_DIR, file)).href)) as Migration;
    }
    return migrations;
  }
}

/**
 * The first layout of migrations/, which mixed areas in files, and the files of one area
 * each that replaced it with the same schema (migrations/README.md):
 *
 *   0012_kernel      ← 0001_event_store (but the id sequences), 0005_groups' instance_keys, 0009_event_seals
 *   0013_users       ← 0002_users, 0003_user_custom_attributes, 0001's id sequences, users_stream_versions (0011)
 *   0014_namespaces  ← 0004's namespaces, 0005_groups' group_custom_attributes, 0010_list_indexes' namespaces part, 0011
 *   0015_projects    ← 0004's projects, stars and group links, 0010_list_indexes' projects part, 0011
 *   0016_members     ← 0004's members and access requests, 0011
 *
 * A database migrated with the first layout holds all of its records; they are renamed,
 * all together, to the new files. Never extended: later changes are new files.
 */
const FIRST_LAYOUT = [
  '0001_event_store',
  '0002_users',
  '0003_user_custom_attributes',
  '0004_namespaces_projects_members',
  '0005_groups',
  '0009_event_seals',
  '0010_list_indexes',
  '0011_projection_stream_versions',
];
const FIRST_LAYOUT_BECAME = ['0012_kernel', '0013_users', '0014_namespaces', '0015_projects', '0016_members'];

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  await renameFirstLayout(db);
  // Unordered: migrations written in parallel branches may land with lower numbers later.
  const migrator = new Migrator({ db, provider: new DirectoryMigrationProvider(), allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Renames the records of a database migrated with the first layout (the migrator would
 * refuse it: its executed migrations are missing). A second process starting beside this
 * one waits on the table lock and then finds them renamed.
 */
async function renameFirstLayout(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ table: string | null }>`select to_regclass(${DEFAULT_MIGRATION_TABLE})::text as table`.execute(db);
  if (!rows[0]?.table) return;
  const firstLayoutRecords = (conn: Kysely<any>) => conn.selectFrom(DEFAULT_MIGRATION_TABLE).select(['name', 'timestamp']).where('name', 'in', FIRST_LAYOUT).execute();
  if ((await firstLayoutRecords(db)).length === 0) return;
  await db.transaction().execute(async (trx) => {
    await sql`lock table ${sql.table(DEFAULT_MIGRATION_TABLE)} in exclusive mode`.execute(trx);
    const recorded = await firstLayoutRecords(trx);
    if (recorded.length === 0) return;
    const names = new Set(recorded.map((r) => r.name as string));
    const missing = FIRST_LAYOUT.filter((name) => !names.has(name));
    if (missing.length > 0) {
      throw new StartupError(
        `the database was migrated by an older forgelog and lacks its migrations ${missing.join(', ')}: ` +
          'migrate it first with a forgelog from before the migrations per area (`forgelog migrate`), then with this one',
      );
    }
    // When the first layout was complete: the schema the new names stand for was in place then.
    const timestamp = recorded.map((r) => r.timestamp as string).sort().at(-1);
    await trx.deleteFrom(DEFAULT_MIGRATION_TABLE).where('name', 'in', FIRST_LAYOUT).execute();
    await trx.insertInto(DEFAULT_MIGRATION_TABLE).values(FIRST_LAYOUT_BECAME.map((name) => ({ name, timestamp }))).execute();
  });
}
