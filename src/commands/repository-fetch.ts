import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { MODES, parseCommit, parseTree, type GitObject, type ObjectType } from '../domain/repository/objects.js';
import { storeObjects } from './repository.js';

/**
 * A commit of one project's repository brought into another's, with everything it reaches
 * that the other lacks: GitLab's MergeRequest#fetch_source_branch! (a fork's source branch
 * fetched into its target project as refs/merge-requests/:iid/head) and the target's head
 * fetched into a fork for a rebase. Objects are content-addressed rows per project, so the
 * fetch is a copy of rows, in the caller's transaction; the walk stops at the commits and
 * trees the other repository already holds (a stored object comes with all it reaches: every
 * write checks connectivity), so its cost is what the other lacks, not the history.
 */
export async function fetchCommit(trx: Db, fromProjectId: number, toProjectId: number, tip: string): Promise<void> {
  if (fromProjectId === toProjectId) return;
  const commits = await missingCommits(trx, fromProjectId, toProjectId, tip);
  if (commits.length === 0) return;
  const commitObjects = await readObjects(trx, fromProjectId, commits);
  const trees: GitObject[] = [];
  let level = [...new Set(commitObjects.map((o) => parseCommit(o.content).tree))];
  const blobs = new Set<string>();
  while (level.length > 0) {
    const lacking = await lackingObjects(trx, toProjectId, level);
    const read = await readObjects(trx, fromProjectId, lacking);
    trees.push(...read);
    const next = new Set<string>();
    for (const t of read) {
      for (const entry of parseTree(t.content)) {
        if (entry.mode === MODES.tree) next.add(entry.sha);
        // A gitlink ('160000') names a commit of another repository: nothing to copy.
        else if ((entry.mode as string) !== '160000') blobs.add(entry.sha);
      }
    }
    level = [...next];
  }
  // Blobs are copied row to row, their contents never leaving the database.
  const shas = [...blobs];
  for (let i = 0; i < shas.length; i += 1000) {
    await sql`insert into repository_objects (project_id, sha, type, size, content)
              select ${toProjectId}, sha, type, size, content from repository_objects
               where project_id = ${fromProjectId} and sha = any(${shas.slice(i, i + 1000)}::text[])
              on conflict do nothing`.execute(trx);
  }
  // Trees, then commits with their index rows (the change index reads the trees from the batch).
  await storeObjects(trx, toProjectId, [...trees, ...commitObjects]);
}

/** The commits `tip` reaches in `from` that `to` does not hold, a level of parents at a time. */
async function missingCommits(trx: Db, fromProjectId: number, toProjectId: number, tip: string): Promise<string[]> {
  const missing: string[] = [];
  const seen = new Set<string>();
  let level = [tip];
  while (level.length > 0) {
    level = level.filter((sha) => !seen.has(sha) && seen.add(sha));
    const held = new Set(
      (await trx.selectFrom('repository_commits').select('sha').where('project_id', '=', toProjectId).where('sha', 'in', level).execute()).map((r) => r.sha),
    );
    const lacking = level.filter((sha) => !held.has(sha));
    if (lacking.length === 0) break;
    const rows = await trx.selectFrom('repository_commits').select(['sha', 'parents']).where('project_id', '=', fromProjectId).where('sha', 'in', lacking).execute();
    missing.push(...rows.map((r) => r.sha));
    level = rows.flatMap((r) => r.parents);
  }
  return missing;
}

async function lackingObjects(trx: Db, projectId: number, shas: readonly string[]): Promise<string[]> {
  const held = new Set<string>();
  for (let i = 0; i < shas.length; i += 1000) {
    const rows = await trx.selectFrom('repository_objects').select('sha').where('project_id', '=', projectId).where('sha', 'in', shas.slice(i, i + 1000)).execute();
    for (const r of rows) held.add(r.sha);
  }
  return shas.filter((sha) => !held.has(sha));
}

async function readObjects(trx: Db, projectId: number, shas: readonly string[]): Promise<GitObject[]> {
  const objects: GitObject[] = [];
  for (let i = 0; i < shas.length; i += 1000) {
    const rows = await trx.selectFrom('repository_objects').select(['sha', 'type', 'content']).where('project_id', '=', projectId).where('sha', 'in', shas.slice(i, i + 1000)).execute();
    objects.push(...rows.map((r) => ({ sha: r.sha, type: r.type as ObjectType, content: r.content })));
  }
  return objects;
}
