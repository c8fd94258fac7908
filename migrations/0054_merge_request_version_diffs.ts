import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The diff each merge request version stores (GitLab's merge_request_diff_files): the files
// of the merge base → head diff as the version took them, written by the command that takes
// the version, in its transaction, so that reading a merge request's changes reads one row
// instead of both trees and every changed blob. Derived from the immutable objects, like them
// not a projection: a rebuild never touches it. `json`, not `jsonb`: a patch may hold a NUL
// (git looks for one in a file's first 8,000 bytes only), which jsonb cannot store.
const statements = [
  `create table merge_request_version_diffs (
    version_id integer primary key,
    files json not null
  )`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop table if exists merge_request_version_diffs').execute(db);
}
