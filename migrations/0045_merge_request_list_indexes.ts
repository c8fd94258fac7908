import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The merge request lists' readable projects (src/projections/merge-requests/list-query.ts):
// an index on the two feature levels read_merge_request asks (the expressions exactly as the
// query writes them) and the visibility. The global and group lists can read the open
// projects with both features enabled from it rather than parse every project's settings,
// and ANALYZE keeps statistics of its expressions, which the planner needs to size that set
// (not partial: PostgreSQL ignores a partial index's expression statistics; without them it
// took the set for one row and joined every merge request with it).
const statements = [
  `create index projects_merge_request_features on projects (
    (coalesce(settings->>'merge_requests_access_level', 'enabled')),
    (coalesce(settings->>'repository_access_level', 'enabled')),
    visibility
  )`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(`drop index if exists projects_merge_request_features`).execute(db);
}
