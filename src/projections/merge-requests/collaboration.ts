import type { Db } from '../../database/database.js';
import type { Viewer } from '../../domain/access.js';
import { mergeableBy } from './queries.js';

/**
 * The branches of a project (a fork) a user may push to without push_code there: GitLab 12.10's
 * Project#branch_allows_collaboration? — the source branches of its open merge requests into
 * another project that allow collaboration (`allow_collaboration`, stored only when the
 * source branch was not protected and both projects not private) and that the user may merge
 * (MergeRequest#can_be_merged_by?: push or merge access to the target branch). None for an
 * empty repository. Read from the merge requests projection by its source project index.
 */
export async function collaborationBranches(db: Db, projectId: number, viewer: Viewer | null): Promise<Set<string>> {
  if (!viewer) return new Set();
  const rows = await db
    .selectFrom('merge_requests')
    .selectAll()
    .where('source_project_id', '=', projectId)
    .where('project_id', '<>', projectId)
    .where('state', '=', 'opened')
    .where('allow_collaboration', '=', true)
    .where((eb) => eb.exists(eb.selectFrom('repository_branches').select('name').where('project_id', '=', projectId)))
    .execute();
  if (rows.length === 0) return new Set();
  const mergeable = await mergeableBy(db, viewer, rows);
  return new Set(rows.filter((row) => mergeable.has(row.id)).map((row) => row.source_branch));
}
