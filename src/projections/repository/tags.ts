import type { Db } from '../../database/database.js';
import type { RepositoryTagRow } from './tables.js';

/** A project's tags, as the repository projection keeps them (src/projections/repository/projector.ts). */

export const listTags = (db: Db, projectId: number): Promise<RepositoryTagRow[]> =>
  db.selectFrom('repository_tags').selectAll().where('project_id', '=', projectId).orderBy('name').execute();

/** A project's tags with the tagged commit's committer time, read from the commit-graph index rather than from each commit. */
export async function listTagsWithCommitTime(db: Db, projectId: number): Promise<(RepositoryTagRow & { committer_time: number })[]> {
  const rows = await db
    .selectFrom('repository_tags as t')
    .innerJoin('repository_commits as c', (join) => join.onRef('c.project_id', '=', 't.project_id').onRef('c.sha', '=', 't.commit_sha'))
    .selectAll('t')
    .select('c.committer_time')
    .where('t.project_id', '=', projectId)
    .execute();
  return rows.map((row) => ({ ...row, committer_time: Number(row.committer_time) }));
}

export const findTag = (db: Db, projectId: number, name: string): Promise<RepositoryTagRow | undefined> =>
  db.selectFrom('repository_tags').selectAll().where('project_id', '=', projectId).where('name', '=', name).executeTakeFirst();
