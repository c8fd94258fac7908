import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { createProject, eventually, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * GitLab 12's reads of blobs and of the commit graph (issue 23 §3): GET …/repository/blobs/:sha
 * (and /raw), …/repository/merge_base, …/commits/:sha/refs, …/commits/:sha/merge_requests and
 * …/repository/contributors. (The older repository reads are in repository-reads.test.ts.)
 */

let api: TestServer;
let projectId: number;
/** master: m1 — m2 — m3; f1 forks at m1 (f1a), f2 at m2 (f2a). */
const sha = {} as Record<'m1' | 'm2' | 'm3' | 'f1a' | 'f2a', string>;

const repo = (rest: string, id = projectId) => `/projects/${id}/repository${rest}`;
async function commit(branch: string, path: string, startBranch?: string) {
  const res = await api.post(repo('/commits'), {
    branch,
    commit_message: `${branch}: ${path}`,
    actions: [{ action: 'create', file_path: path, content: `${path}\n` }],
    ...(startBranch ? { start_branch: startBranch } : {}),
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  projectId = (await createProject(api)).id;
  sha.m1 = await commit('master', 'one.txt');
  sha.f1a = await commit('f1', 'f1.txt', 'master');
  sha.m2 = await commit('master', 'two.txt');
  sha.f2a = await commit('f2', 'f2.txt', 'master');
  sha.m3 = await commit('master', 'three.txt');
});
afterAll(() => api.close());

describe('GET /projects/:id/repository/blobs/:sha', () => {
  it('answers a blob by its SHA (base64), raw as its bytes; a tree, a commit or an unknown SHA is 404 Blob', async () => {
    const tree = (await api.get(repo('/tree'), { query: { ref: 'master' } })).body;
    const one = tree.find((e: any) => e.name === 'one.txt');
    expect(await api.get(repo(`/blobs/${one.id}`))).toMatchObject({ status: 200, body: { size: 8, encoding: 'base64', content: Buffer.from('one.txt\n').toString('base64'), sha: one.id } });
    const raw = await api.get(repo(`/blobs/${one.id}/raw`));
    expect(raw.status).toBe(200);
    expect(raw.text).toBe('one.txt\n');
    expect(raw.headers.get('content-type')).toMatch(/^text\/plain/);
    const commit = (await api.get(repo('/commits/master'))).body;
    for (const other of [commit.id, commit.parent_ids[0], 'f'.repeat(40), 'master', one.id.slice(0, 8)]) {
      expect(await api.get(repo(`/blobs/${other}`))).toMatchObject({ status: 404, body: { message: '404 Blob Not Found' } });
    }
  });
});

describe('GET /projects/:id/repository/merge_base', () => {
  it("answers the best common ancestor as Entities::Commit, for two refs and for more (git's hypothetical merge)", async () => {
    const two = await api.get(repo('/merge_base'), { query: { refs: ['master', 'f1'] } });
    expect(two).toMatchObject({ status: 200, body: { id: sha.m1, short_id: sha.m1.slice(0, 8), title: 'master: one.txt', parent_ids: [] } });
    expect((await api.get(repo('/merge_base'), { query: { refs: ['f2', sha.m3] } })).body.id).toBe(sha.m2);
    // git merge-base m3 f1a f2a: of m3 and a merge of f1a and f2a, the newer fork point.
    expect((await api.get(repo('/merge_base'), { query: { refs: [sha.m3, sha.f1a, sha.f2a] } })).body.id).toBe(sha.m2);
    expect((await api.get(repo('/merge_base'), { query: { refs: [sha.f1a, 'master'] } })).body.id).toBe(sha.m1);
    expect((await api.get(repo('/merge_base'), { query: { refs: ['master', sha.m2] } })).body.id).toBe(sha.m2);
  });

  it('refuses fewer than two refs and names the refs it cannot find', async () => {
    expect(await api.get(repo('/merge_base'))).toMatchObject({ status: 400, body: { error: 'refs is missing' } });
    expect(await api.get(repo('/merge_base'), { query: { refs: ['master'] } })).toMatchObject({ status: 400, body: { message: 'Provide at least 2 refs' } });
    expect(await api.get(repo('/merge_base'), { query: { refs: ['master', 'nope'] } })).toMatchObject({ status: 400, body: { message: 'Could not find ref: nope' } });
    expect(await api.get(repo('/merge_base'), { query: { refs: ['gone', 'master', 'nope'] } })).toMatchObject({ status: 400, body: { message: 'Could not find refs: gone, nope' } });
  });
});

describe('GET /projects/:id/repository/commits/:sha/refs', () => {
  it('lists the branches that hold the commit, by name, paginated; type=tag has none', async () => {
    const refs = async (of: string, query: Record<string, string | number> = {}) => api.get(repo(`/commits/${of}/refs`), { query });
    expect((await refs(sha.m1)).body).toEqual([
      { type: 'branch', name: 'f1' },
      { type: 'branch', name: 'f2' },
      { type: 'branch', name: 'master' },
    ]);
    expect((await refs(sha.m2)).body).toEqual([
      { type: 'branch', name: 'f2' },
      { type: 'branch', name: 'master' },
    ]);
    expect((await refs('f1')).body).toEqual([{ type: 'branch', name: 'f1' }]);
    expect((await refs(sha.m3, { type: 'branch' })).body).toEqual([{ type: 'branch', name: 'master' }]);
    expect((await refs(sha.m1, { type: 'tag' })).body).toEqual([]);
    const page = await refs(sha.m1, { per_page: 2, page: 2 });
    expect(page.body).toEqual([{ type: 'branch', name: 'master' }]);
    expect(page.headers.get('x-total')).toBe('3');
    expect(await refs(sha.m1, { type: 'tags' })).toMatchObject({ status: 400, body: { error: 'type does not have a valid value' } });
    expect(await refs('f'.repeat(40))).toMatchObject({ status: 404, body: { message: '404 Commit Not Found' } });
  });
});

describe('GET /projects/:id/repository/commits/:sha/merge_requests', () => {
  it("lists the merge requests whose latest version holds the commit, newest first, as MergeRequestBasic", async () => {
    const mr = await api.post(`/projects/${projectId}/merge_requests`, { source_branch: 'f1', target_branch: 'master', title: 'F1' });
    expect(mr.status).toBe(201);
    // The mergeability check runs after the opening: the two reads compared below must both see it.
    await eventually(async () => ((await api.get(`/projects/${projectId}/merge_requests`)).body[0]?.merge_status === 'can_be_merged' ? true : undefined));
    const of = async (ref: string, query: Record<string, number> = {}) => api.get(repo(`/commits/${ref}/merge_requests`), { query });
    const listed = await of(sha.f1a);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([expect.objectContaining({ id: mr.body.id, iid: mr.body.iid, title: 'F1', source_branch: 'f1', sha: sha.f1a })]);
    const basic = (await api.get(`/projects/${projectId}/merge_requests`, { query: { iids: [mr.body.iid] } })).body[0];
    expect(listed.body[0]).toEqual(basic);
    expect((await of(sha.m1)).body).toEqual([]);
    // A push to the source branch takes a new version; the commit is still in it, and so is the new one.
    const next = await commit('f1', 'f1-more.txt');
    expect(await eventually(async () => ((await of(next)).body.length > 0 ? (await of(next)).body.map((m: any) => m.iid) : undefined))).toEqual([mr.body.iid]);
    expect((await of(sha.f1a)).body.map((m: any) => m.iid)).toEqual([mr.body.iid]);
    const second = await api.post(`/projects/${projectId}/merge_requests`, { source_branch: 'f1', target_branch: 'f2', title: 'F1 into F2' });
    expect(second.status).toBe(201);
    const both = await of('f1', { per_page: 1 });
    expect(both.body.map((m: any) => m.iid)).toEqual([second.body.iid]);
    expect(both.headers.get('x-total')).toBe('2');
    expect(await of('f'.repeat(40))).toMatchObject({ status: 404, body: { message: '404 Commit Not Found' } });
  });
});

describe('GET /projects/:id/repository/contributors', () => {
  it("groups the default branch's commits but merges by author email, ordered by commits ascending unless asked otherwise", async () => {
    const id = (await createProject(api)).id;
    const as = async (branch: string, path: string, author?: [string, string], start?: string) => {
      const res = await api.post(repo('/commits', id), {
        branch,
        commit_message: path,
        actions: [{ action: 'create', file_path: path, content: path }],
        ...(author ? { author_name: author[0], author_email: author[1] } : {}),
        ...(start ? { start_branch: start } : {}),
      });
      expect(res.status).toBe(201);
    };
    await as('master', 'a1', ['Ada', 'ada@example.com']);
    await as('master', 'b1', ['Bob', 'bob@example.com']);
    await as('master', 'a2', ['Ada Lovelace', 'ada@example.com']);
    const list = async (query: Record<string, string | number> = {}) => api.get(repo('/contributors', id), { query });
    // GitLab 12's defaults: by commits, ascending; a name is the newest commit's (Ada's second).
    const byDefault = await list();
    expect(byDefault.status).toBe(200);
    expect(byDefault.body).toEqual([
      { name: 'Bob', email: 'bob@example.com', commits: 1, additions: 0, deletions: 0 },
      { name: 'Ada Lovelace', email: 'ada@example.com', commits: 2, additions: 0, deletions: 0 },
    ]);
    // A merged topic: Zed's commit counts, the merge commit (root's) does not.
    await as('topic', 'z1', ['Zed', 'zed@example.com'], 'master');
    const mr = await api.post(`/projects/${id}/merge_requests`, { source_branch: 'topic', target_branch: 'master', title: 'Topic' });
    expect((await api.put(`/projects/${id}/merge_requests/${mr.body.iid}/merge`, {})).status).toBe(200);
    expect((await list({ order_by: 'name', sort: 'asc' })).body).toEqual([
      { name: 'Ada Lovelace', email: 'ada@example.com', commits: 2, additions: 0, deletions: 0 },
      { name: 'Bob', email: 'bob@example.com', commits: 1, additions: 0, deletions: 0 },
      { name: 'Zed', email: 'zed@example.com', commits: 1, additions: 0, deletions: 0 },
    ]);
    expect((await list({ order_by: 'commits', sort: 'desc' })).body.map((c: any) => c.email)[0]).toBe('ada@example.com');
    expect((await list({ order_by: 'email', sort: 'desc' })).body.map((c: any) => c.name)).toEqual(['Zed', 'Bob', 'Ada Lovelace']);
    // An order without a sort is ascending; a sort without an order is by commits.
    expect((await list({ order_by: 'name' })).body.map((c: any) => c.name)).toEqual(['Ada Lovelace', 'Bob', 'Zed']);
    expect((await list({ sort: 'desc' })).body.map((c: any) => c.commits)).toEqual([2, 1, 1]);
    const paged = await list({ order_by: 'name', sort: 'asc', per_page: 2, page: 2 });
    expect(paged.body.map((c: any) => c.name)).toEqual(['Zed']);
    expect(paged.headers.get('x-total')).toBe('3');
    expect(await list({ order_by: 'size' })).toMatchObject({ status: 400, body: { error: 'order_by does not have a valid value' } });
    expect(await api.get(repo('/contributors', (await createProject(api)).id))).toMatchObject({ status: 404, body: { message: '404 Not Found' } });
  });
});

// Whoever may download the code reads them; a private project of others is 404.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET blob':       { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, developer: 200, admin: 200 }, public: { anonymous: 200, nonMember: 200, guest: 200 } },
  'GET raw blob':   { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200 }, public: { anonymous: 200, nonMember: 200 } },
  'GET merge_base': { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, admin: 200 }, public: { anonymous: 200, nonMember: 200 } },
  'GET refs':       { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, admin: 200 }, public: { anonymous: 200, nonMember: 200 } },
  'GET contributors': { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, admin: 200 }, public: { anonymous: 200, nonMember: 200 } },
  'GET commit MRs': { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, developer: 200, admin: 200 }, public: { anonymous: 200, nonMember: 200, guest: 200 } },
};

describe('permissions', () => {
  let callers: Callers;
  const sources = new Map<Visibility, { id: number; blob: string; head: string }>();
  beforeAll(async () => {
    callers = await createCallers(api, { prefix: 'reads' });
    for (const visibility of ['private', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      const made = await api.post(repo('/commits', id), { branch: 'master', commit_message: 'Base', actions: [{ action: 'create', file_path: 'a.txt', content: 'a' }] });
      await api.post(repo('/branches', id), { branch: 'other', ref: 'master' });
      const blob = (await api.get(repo('/tree', id))).body[0].id;
      sources.set(visibility, { id, blob, head: made.body.id });
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const { id, blob, head } = sources.get(visibility)!;
    const token = callers[caller].token;
    const path = {
      'GET blob': `/blobs/${blob}`,
      'GET raw blob': `/blobs/${blob}/raw`,
      'GET merge_base': '/merge_base',
      'GET refs': `/commits/${head}/refs`,
      'GET commit MRs': `/commits/${head}/merge_requests`,
      'GET contributors': '/contributors',
    }[endpoint]!;
    const query = endpoint === 'GET merge_base' ? { refs: ['master', 'other'] } : undefined;
    return (await api.get(repo(path, id), { token, ...(query ? { query } : {}) })).status;
  });
});
