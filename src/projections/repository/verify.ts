import { sql } from 'kysely';
import type { Db } from '../../database/database.js';
import { namesObjects, objectsNamedBy } from '../../domain/repository/named-objects.js';
import { MODES, gitObject, parseCommit, parseTag, parseTree, type ObjectType } from '../../domain/repository/objects.js';
import { upcast } from '../../eventstore/upcasters.js';
import type { ObjectStoreCheck, Problem } from '../../eventstore/verify.js';

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
          for (const named of namedBy(row.type, content)) {
            wanted.push({ projectId: row.project_id, ...named, problem: (found) => ({ kind: 'object_missing', detail: `${object} names ${named.field} ${named.sha}: ${found}` }) });
          }
        }
        await lookUp(db, wanted, problem);
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
