import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import { namesObjects, objectsNamedBy } from '../../domain/repository/named-objects.js';
import { MODES, gitObject, parseCommit, parseTag, parseTree, type ObjectType } from '../../domain/repository/objects.js';
import { upcast } from '../../eventstore/upcasters.js';
import type { ObjectStoreCheck, Problem } from '../../eventstore/verify.js';
import { expectedCommitIndex } from './path-changes.js';

/**
 * `forgelog events verify`'s check of the repositories' git objects (`repository_objects`,
 * kept beside the log, not in it): the log names objects by SHA-1, so an object whose content
 * was edited, swapped with another's or deleted would be served under a name the log vouches
 * for. This finds each:
 * - every object hashed again (`<type> <size>\0<content>`): an edited or swapped one no
 *   longer gives the SHA it is stored under (`object_mismatch`);
 * - every object an event names (src/domain/repository/named-objects.ts) and every object a
 *   sound commit or tree names (its tree and parents, its entries) is stored, as that type
 *   (`object_missing`), so a deleted object is named by whatever pointed at it.
 * - every sound commit's rows of the commit graph index (parents, committer time, generation,
 *   and the count of a root's or a single parent's), of the per-path change index and its
 *   stats, which the reads of history trust, are what its object gives
 *   (`commit_index_mismatch`): the change index and the stats recomputed from the trees and
 *   blobs, as the commands wrote them (a commit whose objects are not all stored is left to
 *   object_missing).
 * Objects are read in pages of `pageSize` in key order, so memory stays flat; the names of
 * a page are looked up in one statement.
 */
export function repositoryObjectsCheck(db: Db, pageSize = 200): ObjectStoreCheck {
  return {
    async named(events, problem) {
      const wanted: Wanted[] = [];
      for (const event of events) {
        if (!namesObjects(event.type)) continue;
        let data: unknown;
        try {
          data = upcast(event.type, event.schemaVersion, event.data).data;
        } catch {
          continue; // the feed index check reports an event that cannot be upcast
        }
        for (const named of objectsNamedBy(event.type, data)) {
          wanted.push({
            ...named,
            problem: (found) => ({
              kind: 'object_missing',
              streamId: event.streamId,
              position: event.globalPosition,
              detail: `version ${event.streamVersion} (${event.type}, ${event.eventId}) names ${named.field} ${named.sha}, a ${named.type} of project ${named.projectId}: ${found}`,
            }),
          });
        }
      }
      await lookUp(db, wanted, problem);
    },

    async store(problem, onPage) {
      let checked = 0;
      let after = { projectId: -1, sha: '' };
      for (;;) {
        const rows = await db
          .selectFrom('repository_objects')
          .selectAll()
          .where(sql<boolean>`(project_id, sha) > (${after.projectId}, ${after.sha})`)
          .orderBy('project_id')
          .orderBy('sha')
          .limit(pageSize)
          .execute();
        const wanted: Wanted[] = [];
        const commits = new Map<number, { sha: string; content: Uint8Array }[]>();
        for (const row of rows) {
          const object = `project ${row.project_id}'s ${row.type} ${row.sha}`;
          const content = Buffer.from(row.content);
          const recomputed = gitObject(row.type, content).sha;
          if (recomputed !== row.sha || row.size !== content.length) {
            problem({
              kind: 'object_mismatch',
              projectId: row.project_id,
              sha: row.sha,
              detail:
                recomputed !== row.sha
                  ? `${object}: its content hashes to ${recomputed} — the object was edited or swapped with another`
                  : `${object}: stored with size ${row.size}, its content has ${content.length} bytes — the row was edited`,
            });
            continue; // what an altered object names means nothing
          }
          if (row.type === 'commit') commits.set(row.project_id, [...(commits.get(row.project_id) ?? []), { sha: row.sha, content }]);
          for (const named of namedBy(row.type, content)) {
            wanted.push({ projectId: row.project_id, ...named, problem: (found) => ({ kind: 'object_missing', detail: `${object} names ${named.field} ${named.sha}: ${found}` }) });
          }
        }
        await lookUp(db, wanted, problem);
        for (const [projectId, page] of commits) await checkCommitIndexes(db, projectId, page, problem);
        checked += rows.length;
        onPage(checked);
        const last = rows.at(-1);
        if (!last || rows.length < pageSize) return checked;
        after = { projectId: last.project_id, sha: last.sha };
      }
    },
  };
}

/** An object some event or object names, and the problem to report when it is not stored as `type`. */
interface Wanted {
  readonly projectId: number;
  readonly sha: string;
  readonly type: ObjectType;
  readonly problem: (found: string) => Omit<Problem, 'projectId' | 'sha'>;
}

/** The objects a sound commit, tree or tag names: its tree and parents; its entries; its object (a submodule's commit is another repository's). */
function namedBy(type: ObjectType, content: Uint8Array): { sha: string; type: ObjectType; field: string }[] {
  if (type === 'commit') {
    const commit = parseCommit(content);
    return [{ sha: commit.tree, type: 'tree', field: 'tree' }, ...commit.parents.map((sha, i) => ({ sha, type: 'commit' as const, field: `parent ${i + 1}` }))];
  }
  if (type === 'tag') {
    const tag = parseTag(content);
    return [{ sha: tag.object, type: tag.type, field: 'object' }];
  }
  if (type === 'tree') {
    return parseTree(content)
      .filter((entry) => (entry.mode as string) !== GITLINK)
      .map((entry) => ({ sha: entry.sha, type: entry.mode === MODES.tree ? 'tree' : 'blob', field: `entry ${JSON.stringify(entry.name)}` }));
  }
  return [];
}

const GITLINK = '160000';

/** The commit graph's and the per-path change index's rows of sound commits against what their objects give. */
async function checkCommitIndexes(db: Db, projectId: number, commits: readonly { sha: string; content: Uint8Array }[], problem: (p: Problem) => void): Promise<void> {
  const parsed = commits.map((commit) => ({ sha: commit.sha, ...parseCommit(commit.content) }));
  const graph = new Map(
    (
      await db
        .selectFrom('repository_commits')
        .select(['sha', 'parents', 'generation', 'committer_time', 'ancestors', 'first_parent_depth'])
        .where('project_id', '=', projectId)
        .where('sha', 'in', [...new Set(parsed.flatMap((commit) => [commit.sha, ...commit.parents]))])
        .execute()
    ).map((row) => [row.sha, row]),
  );
  const mismatch = (sha: string, detail: string) => problem({ kind: 'commit_index_mismatch', projectId, sha, detail: `project ${projectId}'s commit ${sha}: ${detail}` });
  for (const commit of parsed) {
    const row = graph.get(commit.sha);
    if (!row) {
      mismatch(commit.sha, 'no row in the commit graph index');
      continue;
    }
    const stored = commit.parents.flatMap((parent) => graph.get(parent) ?? []);
    const generation = 1 + Math.max(0, ...stored.map((parent) => parent.generation));
    const ancestors = stored.length === 0 ? 1 : commit.parents.length === 1 ? stored[0]!.ancestors + 1 : row.ancestors;
    if (row.parents.join(' ') !== commit.parents.join(' ') || Number(row.committer_time) !== commit.committer.time || row.generation !== generation || row.ancestors !== ancestors) {
      mismatch(commit.sha, `its commit graph row (parents, committer time ${row.committer_time}, generation ${row.generation}, ancestors ${row.ancestors}) is not what the commit and its parents' rows give (committer time ${commit.committer.time}, generation ${generation}, ancestors ${ancestors})`);
    }
    const firstParentDepth = 1 + (commit.parents[0] === undefined ? 0 : (graph.get(commit.parents[0])?.first_parent_depth ?? 0));
    if (row.first_parent_depth !== firstParentDepth) mismatch(commit.sha, `its commit graph row's first-parent depth ${row.first_parent_depth} is not its first parent's plus one (${firstParentDepth})`);
  }
  const key = (path: string, entry: string | null, follow: number | null) => `${JSON.stringify(path)} ${entry ?? 'removed'}${follow === null ? '' : ` follows parent ${follow}`}`;
  const expected = new Map(parsed.map((commit) => [commit.sha, new Set<string>()]));
  const recomputed = await expectedCommitIndex(db, projectId, [...expected.keys()]);
  for (const change of recomputed.changes) expected.get(change.commit)!.add(key(change.path, change.entry, change.follow));
  for (const sha of recomputed.unsound) expected.delete(sha);
  if (recomputed.stats.length > 0) {
    const stored = new Map(
      (
        await db
          .selectFrom('repository_commit_stats')
          .select(['commit_sha', 'additions', 'deletions'])
          .where('project_id', '=', projectId)
          .where('commit_sha', 'in', recomputed.stats.map((row) => row.commit))
          .execute()
      ).map((row) => [row.commit_sha, row]),
    );
    for (const want of recomputed.stats) {
      const have = stored.get(want.commit);
      if (!have) mismatch(want.commit, 'no row of stats');
      else if (have.additions !== want.additions || have.deletions !== want.deletions) {
        mismatch(want.commit, `its stats (${have.additions} additions, ${have.deletions} deletions) are not what its diff gives (${want.additions} additions, ${want.deletions} deletions)`);
      }
    }
  }
  if (expected.size === 0) return;
  const rows = await db.selectFrom('repository_path_changes').select(['commit_sha', 'path', 'entry', 'follow']).where('project_id', '=', projectId).where('commit_sha', 'in', [...expected.keys()]).execute();
  const found = new Map([...expected.keys()].map((sha) => [sha, new Set<string>()]));
  for (const row of rows) found.get(row.commit_sha)?.add(key(row.path, row.entry, row.follow));
  for (const [sha, want] of expected) {
    const have = found.get(sha)!;
    const missing = [...want].filter((k) => !have.has(k));
    const extra = [...have].filter((k) => !want.has(k));
    if (missing.length > 0) mismatch(sha, `the per-path change index lacks ${missing.slice(0, 3).join(', ')}${missing.length > 3 ? ` and ${missing.length - 3} more` : ''}`);
    if (extra.length > 0) mismatch(sha, `the per-path change index holds ${extra.slice(0, 3).join(', ')}${extra.length > 3 ? ` and ${extra.length - 3} more` : ''}, which the commit does not change`);
  }
}

async function lookUp(db: Db, wanted: readonly Wanted[], problem: (p: Problem) => void): Promise<void> {
  if (wanted.length === 0) return;
  const keys = [...new Map(wanted.map((w) => [`${w.projectId}:${w.sha}`, w])).values()];
  const { rows } = await sql<{ project_id: number; sha: string; type: ObjectType }>`
    select o.project_id, o.sha, o.type from repository_objects o
      join unnest(${keys.map((k) => k.projectId)}::integer[], ${keys.map((k) => k.sha)}::text[]) as k(project_id, sha)
        on o.project_id = k.project_id and o.sha = k.sha`.execute(db);
  const stored = new Map(rows.map((row) => [`${row.project_id}:${row.sha}`, row.type]));
  for (const w of wanted) {
    const type = stored.get(`${w.projectId}:${w.sha}`);
    if (type === w.type) continue;
    problem({ ...w.problem(type === undefined ? 'not stored' : `stored as a ${type}`), projectId: w.projectId, sha: w.sha });
  }
}
