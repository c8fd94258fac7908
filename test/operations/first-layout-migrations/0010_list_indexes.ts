import { sql, type Kysely } from 'kysely';

// Read-heavy GIN indexes without a pending list (a pending list is scanned whole by every
// `traversal_ids &&` lookup until vacuum flushes it), and an index that lets GET /groups
// count visible groups without a scan of all namespaces.
const statements = [
  `alter index projects_traversal set (fastupdate = off)`,
  `alter index namespaces_traversal set (fastupdate = off)`,
  `create index namespaces_live_groups on namespaces (name, id) where kind = 'group' and not pending_delete`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop index if exists namespaces_live_groups').execute(db);
  await sql.raw('alter index projects_traversal reset (fastupdate)').execute(db);
  await sql.raw('alter index namespaces_traversal reset (fastupdate)').execute(db);
}
