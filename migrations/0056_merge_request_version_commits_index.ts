import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// GitLab's merge_request_diff_commits is indexed by SHA: GET …/commits/:sha/merge_requests
// finds the versions holding a commit through this index (`commit_shas @> array[sha]`)
// instead of reading every version of the project.
const statements = [`create index merge_request_versions_commit_shas on merge_request_versions using gin (commit_shas)`];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop index if exists merge_request_versions_commit_shas').execute(db);
}
