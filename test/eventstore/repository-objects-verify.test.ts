import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { objectsNamedBy } from '../../src/domain/repository/named-objects.js';
import { parseCommit, parseTree } from '../../src/domain/repository/objects.js';
import { verifyLog, type Problem } from '../../src/eventstore/verify.js';
import { repositoryObjectsCheck } from '../../src/projections/repository/verify.js';
import { pathKey } from '../../src/projections/repository/path-changes.js';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Issue 23 §5: `events verify` checks the git objects the log names by SHA-1 — an edited,
 * swapped or deleted object is found and named, as an edited event is.
 */

let api: TestServer;
let projectId: number;
let head: string;
let rootTree: string;
let docsTree: string;
let blobs: { readme: string; guide: string };
let original: ObjectRow[];

type ObjectRow = { project_id: number; sha: string; type: 'blob' | 'tree' | 'commit'; size: number; content: Uint8Array };

const objectRows = async () => (await sql<ObjectRow>`select * from repository_objects where project_id = ${projectId} order by sha`.execute(api.handle.db)).rows;
const verify = () => verifyLog(api.handle.db, { objects: repositoryObjectsCheck(api.handle.db, 3) });
const objectProblems = (problems: readonly Problem[]) => problems.filter((p) => p.kind.startsWith('object_'));

/** Changes the project's objects as someone with the database owner's rights could (the table refuses UPDATE). */
async function tamper(change: string) {
  await api.handle.db.transaction().execute(async (trx) => {
    await sql`alter table repository_objects disable trigger repository_objects_no_update`.execute(trx);
    await sql.raw(change).execute(trx);
    await sql`alter table repository_objects enable trigger repository_objects_no_update`.execute(trx);
  });
}

/** Puts the objects back as they were. */
async function restore() {
  await sql`delete from repository_objects where project_id = ${projectId}`.execute(api.handle.db);
  await api.handle.db.insertInto('repository_objects').values(original).execute();
}

beforeAll(async () => {
  api = await startTestServer();
  const project = await createProject(api);
  projectId = project.id;
  const commit = (branch: string, actions: object[], extra: object = {}) =>
    api.post(`/projects/${projectId}/repository/commits`, { branch, commit_message: 'change', actions, ...extra });
  expect((await commit('master', [{ action: 'create', file_path: 'README.md', content: 'read me\n' }, { action: 'create', file_path: 'docs/guide.md', content: 'a guide\n' }])).status).toBe(201);
  expect((await commit('feature', [{ action: 'update', file_path: 'docs/guide.md', content: 'a better guide\n' }], { start_branch: 'master' })).status).toBe(201);
  const mr = await api.post(`/projects/${projectId}/merge_requests`, { source_branch: 'feature', target_branch: 'master', title: 'Better guide' });
  expect(mr.status).toBe(201);
  expect((await api.put(`/projects/${projectId}/merge_requests/${mr.body.iid}/merge`, {})).status).toBe(200);
  await settled(api);
  head = (await api.get(`/projects/${projectId}/repository/branches/master`)).body.commit.id;
  original = await objectRows();
  const byType = (sha: string) => original.find((o) => o.sha === sha)!;
  rootTree = parseCommit(byType(head).content).tree;
  const entries = parseTree(byType(rootTree).content);
  docsTree = entries.find((e) => e.name === 'docs')!.sha;
  blobs = { readme: entries.find((e) => e.name === 'README.md')!.sha, guide: parseTree(byType(docsTree).content)[0]!.sha };
});
afterAll(() => api.close());

describe('events verify and the git objects', () => {
  it('finds nothing wrong with objects as the commands wrote them, and hashes every one of them', async () => {
    const report = await verify();
    expect(objectProblems(report.problems)).toEqual([]);
    expect(report.ok).toBe(true);
    const stored = Number((await sql<{ n: string }>`select count(*) as n from repository_objects`.execute(api.handle.db)).rows[0]!.n);
    expect(report.objectsChecked).toBe(stored);
    expect(report.objectsChecked).toBeGreaterThanOrEqual(original.length);
  });

  it('names an edited blob by its project and SHA', async () => {
    await tamper(`update repository_objects set content = convert_to('read me, edited\n', 'UTF8') where project_id = ${projectId} and sha = '${blobs.readme}'`);
    try {
      const report = await verify();
      expect(report.ok).toBe(false);
      expect(objectProblems(report.problems)).toEqual([
        { kind: 'object_mismatch', projectId, sha: blobs.readme, detail: expect.stringMatching(new RegExp(`^project ${projectId}'s blob ${blobs.readme}: its content hashes to [0-9a-f]{40} — the object was edited or swapped with another$`)) },
      ]);
    } finally {
      await restore();
    }
  });

  it('names both objects of a swap', async () => {
    await tamper(`update repository_objects o set content = s.content, size = s.size
      from repository_objects s where o.project_id = ${projectId} and s.project_id = ${projectId}
       and ((o.sha = '${blobs.readme}' and s.sha = '${blobs.guide}') or (o.sha = '${blobs.guide}' and s.sha = '${blobs.readme}'))`);
    try {
      const found = objectProblems((await verify()).problems);
      expect(found.map((p) => [p.kind, p.sha]).sort()).toEqual([['object_mismatch', blobs.guide], ['object_mismatch', blobs.readme]].sort());
    } finally {
      await restore();
    }
  });

  it('names a deleted tree through the tree that holds it', async () => {
    await tamper(`delete from repository_objects where project_id = ${projectId} and sha = '${docsTree}'`);
    try {
      const found = objectProblems((await verify()).problems);
      expect(found).toContainEqual({ kind: 'object_missing', projectId, sha: docsTree, detail: `project ${projectId}'s tree ${rootTree} names entry "docs" ${docsTree}: not stored` });
      expect(found.every((p) => p.kind === 'object_missing' && p.sha === docsTree)).toBe(true);
    } finally {
      await restore();
    }
  });

  it('names a deleted commit through the events and the commits that name it, and an object of another type in its place', async () => {
    await tamper(`delete from repository_objects where project_id = ${projectId} and sha = '${head}'`);
    try {
      const found = objectProblems((await verify()).problems);
      const byEvents = found.filter((p) => p.streamId !== undefined);
      // The merge moved master to it (BranchUpdated) and the merge request recorded it (MergeRequestMerged).
      expect(byEvents.map((p) => p.streamId).sort()).toEqual(expect.arrayContaining([`repository-${projectId}:refs/heads/master`, expect.stringMatching(/^merge-request-\d+$/)]));
      for (const p of byEvents) {
        expect(p).toMatchObject({ kind: 'object_missing', projectId, sha: head, position: expect.any(String) });
        expect(p.detail).toMatch(new RegExp(`^version \\d+ \\((BranchUpdated|MergeRequestMerged), [0-9a-f-]{36}\\) names [a-z_.\\[\\]0-9]+ ${head}, a commit of project ${projectId}: not stored$`));
      }
    } finally {
      await restore();
    }
    // A blob stored under a commit's name: the name resolves, to the wrong type.
    const readme = original.find((o) => o.sha === blobs.readme)!;
    await tamper(`delete from repository_objects where project_id = ${projectId} and sha = '${head}'`);
    await api.handle.db.insertInto('repository_objects').values({ ...readme, sha: head }).execute();
    try {
      const found = objectProblems((await verify()).problems);
      expect(found).toContainEqual(expect.objectContaining({ kind: 'object_mismatch', sha: head }));
      expect(found.filter((p) => p.kind === 'object_missing').every((p) => p.detail.endsWith('stored as a blob'))).toBe(true);
      expect(found.some((p) => p.kind === 'object_missing')).toBe(true);
    } finally {
      await restore();
    }
  });

  it('names a commit whose rows of the commit graph or of the per-path change index were edited, removed or added', async () => {
    const db = api.handle.db;
    const indexProblems = async () => (await verify()).problems.filter((p) => p.kind === 'commit_index_mismatch');
    expect(await indexProblems()).toEqual([]);
    const graph = await db.selectFrom('repository_commits').selectAll().where('project_id', '=', projectId).execute();
    const changes = await db.selectFrom('repository_path_changes').selectAll().where('project_id', '=', projectId).execute();
    const asOwner = (table: string, statement: string) =>
      db.transaction().execute(async (trx) => {
        await sql.raw(`alter table ${table} disable trigger ${table}_no_update`).execute(trx);
        await sql.raw(statement).execute(trx);
        await sql.raw(`alter table ${table} enable trigger ${table}_no_update`).execute(trx);
      });
    try {
      await asOwner('repository_commits', `update repository_commits set generation = generation + 1 where project_id = ${projectId} and sha = '${head}'`);
      await db.deleteFrom('repository_path_changes').where('project_id', '=', projectId).where('commit_sha', '=', head).where('path', '=', 'docs/guide.md').execute();
      await db.insertInto('repository_path_changes').values({ project_id: projectId, path: 'nowhere.txt', path_key: pathKey('nowhere.txt'), commit_sha: head, entry: blobs.readme, follow: null }).execute();
      const found = await indexProblems();
      expect(found.every((p) => p.sha === head && p.projectId === projectId)).toBe(true);
      expect(found).toHaveLength(3);
      expect(found.map((p) => p.detail)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/: its commit graph row \(parents, committer time \d+, generation \d+, ancestors \d+\) is not what the commit and its parents' rows give \(committer time \d+, generation \d+, ancestors \d+\)$/),
          expect.stringMatching(/: the per-path change index lacks "docs\/guide\.md" [0-9a-f]{40} follows parent 2$/),
          `project ${projectId}'s commit ${head}: the per-path change index holds "nowhere.txt" ${blobs.readme}, which the commit does not change`,
        ]),
      );
      await db.deleteFrom('repository_commits').where('project_id', '=', projectId).where('sha', '=', head).execute();
      expect((await indexProblems()).map((p) => p.detail)).toContain(`project ${projectId}'s commit ${head}: no row in the commit graph index`);
    } finally {
      await db.deleteFrom('repository_commits').where('project_id', '=', projectId).execute();
      await db.insertInto('repository_commits').values(graph.map((row) => ({ ...row, committer_time: Number(row.committer_time) }))).execute();
      await db.deleteFrom('repository_path_changes').where('project_id', '=', projectId).execute();
      await db.insertInto('repository_path_changes').values(changes).execute();
    }
    expect(await indexProblems()).toEqual([]);
  });

  it('knows which events name which commits', () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const c = 'c'.repeat(40);
    expect(objectsNamedBy('BranchUpdated', { project_id: 7, branch: 'x', old_sha: a, new_sha: b, commits: [b, c], commit_details: null })).toEqual([
      { projectId: 7, sha: a, type: 'commit', field: 'old_sha' },
      { projectId: 7, sha: b, type: 'commit', field: 'new_sha' },
      { projectId: 7, sha: b, type: 'commit', field: 'commits[0]' },
      { projectId: 7, sha: c, type: 'commit', field: 'commits[1]' },
    ]);
    const version = { version_id: 1, head_commit_sha: a, base_commit_sha: null, start_commit_sha: b, commit_shas: [a], files_count: 1 };
    expect(objectsNamedBy('MergeRequestVersionRecorded', { id: 1, project_id: 3, iid: 1, version }).map((n) => n.field)).toEqual([
      'version.head_commit_sha',
      'version.start_commit_sha',
      'version.commit_shas[0]',
    ]);
    expect(objectsNamedBy('MergeRequestMerged', { id: 1, project_id: 3, iid: 1, title: 't', by_id: 1, merge_commit_sha: c, squash_commit_sha: null })).toEqual([
      { projectId: 3, sha: c, type: 'commit', field: 'merge_commit_sha' },
    ]);
    expect(objectsNamedBy('MergeRequestClosed', { id: 1, project_id: 3, iid: 1, title: 't', by_id: 1 })).toEqual([]);
    expect(objectsNamedBy('UserCreated', { id: 1 })).toEqual([]);
  });
});
