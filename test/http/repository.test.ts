import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  // Its projects' branches are protected by the tests themselves: none at a default branch's first write (default_branch_protection, test/http/git-push.test.ts).
  await api.put('/application/settings', { default_branch_protection: 0 });
});
afterAll(() => api.close());

const repo = (projectId: number, rest = '') => `/projects/${projectId}/repository${rest}`;
const commitTo = (projectId: number, body: Record<string, unknown>, token?: string | null) => api.post(repo(projectId, '/commits'), body, token === undefined ? {} : { token });
const create = (path: string, content: string) => ({ action: 'create', file_path: path, content });
const objectCount = async (projectId: number) =>
  Number((await sql<{ n: string }>`select count(*) as n from repository_objects where project_id = ${projectId}`.execute(api.handle.db)).rows[0]!.n);

describe('initialize_with_readme', () => {
  it("gives the default branch one commit with GitLab's README.md, authored by the creator", async () => {
    const res = await api.post('/projects', { name: 'Readme Shop', description: 'Sells things', initialize_with_readme: true });
    expect(res.status).toBe(201);
    const id = res.body.id;
    const branches = await api.get(repo(id, '/branches'));
    expect(branches.status).toBe(200);
    expect(branches.body).toMatchObject([{ name: 'master', default: true, protected: false, merged: false, can_push: true }]);
    const head = branches.body[0].commit;
    expect(head).toMatchObject({ title: 'Initial commit', message: 'Initial commit', parent_ids: [], author_name: 'Administrator', committer_name: 'Administrator' });
    const file = await api.get(repo(id, '/files/README.md'), { query: { ref: 'master' } });
    expect(file.status).toBe(200);
    expect(Buffer.from(file.body.content, 'base64').toString()).toBe('# Readme Shop\n\nSells things');
    expect(file.body).toMatchObject({ file_name: 'README.md', file_path: 'README.md', encoding: 'base64', ref: 'master', commit_id: head.id, last_commit_id: head.id, size: 27 });
    const events = await api.repositoryEvents(id);
    expect(events).toMatchObject([{ type: 'BranchCreated', data: { project_id: id, branch: 'master', new_sha: head.id, commits: [head.id] } }]);
    // The repository is where default_branch must exist.
    expect((await api.put(`/projects/${id}`, { default_branch: 'develop' })).status).toBe(400);
    expect((await api.post(repo(id, '/branches'), { branch: 'develop', ref: 'master' })).status).toBe(201);
    expect((await api.put(`/projects/${id}`, { default_branch: 'develop' })).body.default_branch).toBe('develop');
  });

  it('leaves a project created without it with an empty repository', async () => {
    const project = await createProject(api);
    expect((await api.get(repo(project.id, '/branches'))).body).toEqual([]);
    expect(await api.repositoryEvents(project.id)).toEqual([]);
    expect((await api.get(repo(project.id, '/tree'))).status).toBe(404);
  });
});

describe('POST /projects/:id/repository/commits', () => {
  it('commits the actions on a new branch of an empty repository, then on top of it, with GitLab 12 CommitDetail', async () => {
    const project = await createProject(api);
    const first = await commitTo(project.id, {
      branch: 'master',
      commit_message: 'Add files\n\nwith a body',
      actions: [create('src/app.js', 'one\ntwo\n'), { action: 'create', file_path: 'bin/run', content: Buffer.from('#!/bin/sh\n').toString('base64'), encoding: 'base64' }],
    });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{40}$/),
      short_id: first.body.id.slice(0, 8),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000\+00:00$/),
      parent_ids: [],
      title: 'Add files',
      message: 'Add files\n\nwith a body',
      author_name: 'Administrator',
      author_email: expect.any(String),
      authored_date: first.body.created_at,
      committer_name: 'Administrator',
      committer_email: first.body.author_email,
      committed_date: first.body.created_at,
      web_url: `${(await api.get(`/projects/${project.id}`)).body.web_url}/-/commit/${first.body.id}`,
      stats: { additions: 3, deletions: 0, total: 3 },
      status: null,
      project_id: project.id,
      last_pipeline: null,
    });
    const second = await commitTo(project.id, {
      branch: 'master',
      commit_message: 'Change',
      author_name: 'Ada',
      author_email: 'ada@example.com',
      actions: [
        { action: 'update', file_path: 'src/app.js', content: 'one\nthree\n' },
        { action: 'move', file_path: 'bin/start', previous_path: 'bin/run' },
        { action: 'chmod', file_path: 'bin/start', execute_filemode: true },
      ],
    });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ parent_ids: [first.body.id], author_name: 'Ada', author_email: 'ada@example.com', committer_name: 'Administrator', stats: { additions: 1, deletions: 1, total: 2 } });
    const tree = await api.get(repo(project.id, '/tree'), { query: { recursive: true } });
    expect(tree.body).toEqual([
      { id: expect.any(String), name: 'bin', type: 'tree', path: 'bin', mode: '040000' },
      { id: expect.any(String), name: 'src', type: 'tree', path: 'src', mode: '040000' },
      { id: expect.any(String), name: 'start', type: 'blob', path: 'bin/start', mode: '100755' },
      { id: expect.any(String), name: 'app.js', type: 'blob', path: 'src/app.js', mode: '100644' },
    ]);
    expect((await api.get(repo(project.id, '/tree'), { query: { path: 'src' } })).body).toMatchObject([{ name: 'app.js', path: 'src/app.js' }]);
    const raw = await api.get(repo(project.id, '/files/src%2Fapp.js/raw'), { query: { ref: 'master' } });
    expect(raw).toMatchObject({ status: 200, text: 'one\nthree\n' });
    // last_commit_id: the newest commit that changed the path.
    const moved = await commitTo(project.id, { branch: 'master', commit_message: 'Other', actions: [create('other.txt', 'x')] });
    const file = await api.get(repo(project.id, '/files/src%2Fapp.js'), { query: { ref: 'master' } });
    expect(file.body).toMatchObject({ commit_id: moved.body.id, last_commit_id: second.body.id });
    expect(await api.repositoryEvents(project.id)).toMatchObject([
      { type: 'BranchCreated', data: { branch: 'master', new_sha: first.body.id } },
      { type: 'BranchUpdated', data: { branch: 'master', old_sha: first.body.id, new_sha: second.body.id, commits: [second.body.id] } },
      { type: 'BranchUpdated', data: { old_sha: second.body.id, new_sha: moved.body.id } },
    ]);
  });

  it('starts a new branch from start_branch', async () => {
    const project = await createProject(api);
    const base = (await commitTo(project.id, { branch: 'master', commit_message: 'Base', actions: [create('a.txt', 'a')] })).body;
    const res = await commitTo(project.id, { branch: 'feature', start_branch: 'master', commit_message: 'Feature', actions: [create('b.txt', 'b')] });
    expect(res.status).toBe(201);
    expect(res.body.parent_ids).toEqual([base.id]);
    expect((await api.get(repo(project.id, '/branches'))).body.map((b: any) => [b.name, b.commit.id, b.merged])).toEqual([
      ['feature', res.body.id, false],
      ['master', base.id, false],
    ]);
    expect(await commitTo(project.id, { branch: 'feature', start_branch: 'master', commit_message: 'x', actions: [create('c.txt', 'c')] })).toMatchObject({
      status: 400,
      body: { message: "A branch called 'feature' already exists. Switch to that branch in order to make changes" },
    });
    expect(await commitTo(project.id, { branch: 'nope', commit_message: 'x', actions: [create('c.txt', 'c')] })).toMatchObject({
      status: 400,
      body: { message: 'You can only create or edit files when you are on a branch' },
    });
  });

  it("refuses as GitLab's Files::MultiService does, and writes no object then", async () => {
    const project = await createProject(api);
    expect(await commitTo(project.id, { branch: 'master', commit_message: 'x', actions: [{ action: 'update', file_path: 'a', content: '' }] })).toMatchObject({
      status: 400,
      body: { message: 'No files to update.' },
    });
    await commitTo(project.id, { branch: 'master', commit_message: 'Base', actions: [create('a.txt', 'a')] });
    const before = await objectCount(project.id);
    const cases: [Record<string, unknown>, string][] = [
      [create('a.txt', 'again'), 'Your changes could not be committed because a file with the name `a.txt` already exists.'],
      [{ action: 'update', file_path: 'missing.txt', content: 'x' }, 'File to be updated `missing.txt` does not exist.'],
      [{ action: 'delete', file_path: 'missing.txt' }, 'File to be deleted `missing.txt` does not exist.'],
      [{ action: 'move', file_path: 'b.txt', previous_path: 'missing.txt' }, 'File to be moved `missing.txt` does not exist.'],
      [{ action: 'move', file_path: 'a.txt', previous_path: 'a.txt' }, 'Move destination `a.txt` already exists.'],
      [create('../etc/passwd', 'x'), 'Your changes could not be committed, because the file name, `../etc/passwd` cannot include directory traversal. '],
    ];
    for (const [action, message] of cases) {
      expect(await commitTo(project.id, { branch: 'master', commit_message: 'x', actions: [create('fresh.txt', 'new'), action] }), message).toMatchObject({ status: 400, body: { message } });
    }
    expect(await objectCount(project.id)).toBe(before);
    expect(await commitTo(project.id, {})).toMatchObject({ status: 400, body: { error: 'branch is missing, commit_message is missing, actions is missing' } });
    expect(await commitTo(project.id, { branch: 'master', commit_message: 'x', actions: [{ action: 'frob' }] })).toMatchObject({
      status: 400,
      body: { error: 'actions[0][action] does not have a valid value, actions[0][file_path] is missing' },
    });
    expect(await commitTo(project.id, { branch: 'master', commit_message: 'x', actions: 'nope' })).toMatchObject({ status: 400, body: { error: 'actions is invalid' } });
    expect(await commitTo(project.id, { branch: 'master', commit_message: 'x', actions: [{ action: 'create', file_path: 'y', content: { x: 1 } }] })).toMatchObject({
      status: 400,
      body: { error: 'actions[0][content] is invalid' },
    });
    expect(await api.get(repo(project.id, '/tree'), { query: { path: 'a.txt' } })).toMatchObject({ status: 404, body: { message: '404 Tree Not Found' } });
    expect((await api.get(repo(project.id, '/files/%2E%2E%2Fa.txt'), { query: { ref: 'master' } })).status).toBe(404);
    // An author cannot break the commit's header: git's ident cleaning.
    const forged = await commitTo(project.id, { branch: 'master', commit_message: 'x', author_name: 'Eve>\ncommitter Mallory <m@x> 0 +0000\n', author_email: '<eve@example.com>', actions: [create('eve.txt', 'e')] });
    expect(forged.body).toMatchObject({ author_name: 'Evecommitter Mallory m@x 0 +0000', author_email: 'eve@example.com', committer_name: 'Administrator' });
  });

  it("enforces the branch's protection: push_access_levels, wildcards and user rules", async () => {
    const callers = await createCallers(api, { prefix: 'push' });
    const project = await createProject(api);
    await api.post(`/projects/${project.id}/members`, { user_id: callers.developer.user!.id, access_level: 30 });
    await api.post(`/projects/${project.id}/members`, { user_id: callers.maintainer.user!.id, access_level: 40 });
    await commitTo(project.id, { branch: 'master', commit_message: 'Base', actions: [create('a.txt', 'a')] });
    expect((await api.post(`/projects/${project.id}/protected_branches`, { name: 'master' })).status).toBe(201);
    expect((await api.post(`/projects/${project.id}/protected_branches`, { name: 'release/*', push_access_level: 30 })).status).toBe(201);
    const dev = callers.developer.token;
    expect(await commitTo(project.id, { branch: 'master', commit_message: 'x', actions: [create('b.txt', 'b')] }, dev)).toMatchObject({
      status: 403,
      body: { message: '403 Forbidden - You are not allowed to push into this branch' },
    });
    expect((await commitTo(project.id, { branch: 'master', commit_message: 'x', actions: [create('b.txt', 'b')] }, callers.maintainer.token)).status).toBe(201);
    expect((await commitTo(project.id, { branch: 'release/1', start_branch: 'master', commit_message: 'x', actions: [create('c.txt', 'c')] }, dev)).status).toBe(201);
    const branches = (await api.get(repo(project.id, '/branches'), { token: dev })).body;
    expect(branches.map((b: any) => [b.name, b.protected, b.developers_can_push, b.can_push])).toEqual([
      ['master', true, false, false],
      ['release/1', true, true, true],
    ]);
    // A developer deletes no protected branch, nobody the default one: GitLab's branch check, answered with 400.
    expect(await api.del(repo(project.id, '/branches/release%2F1'), { token: dev })).toMatchObject({
      status: 400,
      body: { message: 'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.' },
    });
    expect(await api.del(repo(project.id, '/branches/master'))).toMatchObject({ status: 400, body: { message: 'The default branch of a project cannot be deleted.' } });
    expect((await api.del(repo(project.id, '/branches/release%2F1'), { token: callers.maintainer.token })).status).toBe(204);
  });
});

describe('branches', () => {
  it('creates from a branch or a SHA, finds, searches and deletes', async () => {
    const project = await createProject(api);
    const base = (await commitTo(project.id, { branch: 'master', commit_message: 'Base', actions: [create('a.txt', 'a')] })).body;
    const made = await api.post(repo(project.id, '/branches'), { branch: 'feature/one', ref: base.id.slice(0, 10) });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({
      name: 'feature/one',
      commit: expect.objectContaining({ id: base.id }),
      merged: false,
      protected: false,
      developers_can_push: false,
      developers_can_merge: false,
      can_push: true,
      default: false,
      web_url: `${(await api.get(`/projects/${project.id}`)).body.web_url}/-/tree/feature/one`,
    });
    expect(await api.post(repo(project.id, '/branches'), { branch: 'feature/one', ref: 'master' })).toMatchObject({ status: 400, body: { message: 'Branch already exists' } });
    // merged: an ancestor of the default branch's head (not the head itself).
    await commitTo(project.id, { branch: 'master', commit_message: 'Ahead', actions: [create('b.txt', 'b')] });
    expect((await api.get(repo(project.id, '/branches/feature%2Fone'))).body).toMatchObject({ merged: true, default: false });
    expect((await api.get(repo(project.id, '/branches/master'))).body).toMatchObject({ merged: false, default: true });
    expect((await api.get(`/projects/${project.id}`)).body.default_branch).toBe('master');
    expect(await api.post(repo(project.id, '/branches'), { branch: 'bad..name', ref: 'master' })).toMatchObject({ status: 400, body: { message: 'Branch name is invalid' } });
    expect(await api.post(repo(project.id, '/branches'), { branch: 'x', ref: 'nowhere' })).toMatchObject({ status: 400, body: { message: 'Invalid reference name: nowhere' } });
    expect(await api.post(repo(project.id, '/branches'), { branch: 'x' })).toMatchObject({ status: 400, body: { error: 'ref is missing' } });
    expect((await api.get(repo(project.id, '/branches/feature%2Fone'))).body.name).toBe('feature/one');
    expect(await api.get(repo(project.id, '/branches/none'))).toMatchObject({ status: 404, body: { message: '404 Branch Not Found' } });
    expect((await api.get(repo(project.id, '/branches'), { query: { search: 'FEAT' } })).body.map((b: any) => b.name)).toEqual(['feature/one']);
    expect((await api.del(repo(project.id, '/branches/feature%2Fone'))).status).toBe(204);
    expect(await api.del(repo(project.id, '/branches/feature%2Fone'))).toMatchObject({ status: 404, body: { message: '404 Branch Not Found' } });
    expect(await api.repositoryEvents(project.id)).toMatchObject([
      { type: 'BranchCreated' },
      { type: 'BranchCreated', data: { branch: 'feature/one', new_sha: base.id, commits: [] } },
      { type: 'BranchUpdated' },
      { type: 'BranchDeleted', data: { branch: 'feature/one', old_sha: base.id } },
    ]);
  });
});

describe('commits', () => {
  it('lists the history newest first, by ref, path and dates, paginated; finds one by SHA or branch', async () => {
    const project = await createProject(api);
    const shas: string[] = [];
    for (const [i, path] of ['a.txt', 'b.txt', 'a.txt'].entries()) {
      shas.push((await commitTo(project.id, { branch: 'master', commit_message: `C${i}`, actions: [{ action: i === 2 ? 'update' : 'create', file_path: path, content: `${i}` }] })).body.id);
    }
    const list = await api.get(repo(project.id, '/commits'), { query: { per_page: 2 } });
    expect(list.body.map((c: any) => c.id)).toEqual([shas[2], shas[1]]);
    expect(list.headers.get('x-total')).toBe('3');
    expect((await api.get(repo(project.id, '/commits'), { query: { path: 'a.txt' } })).body.map((c: any) => c.id)).toEqual([shas[2], shas[0]]);
    expect((await api.get(repo(project.id, '/commits'), { query: { ref_name: shas[1]! } })).body.map((c: any) => c.id)).toEqual([shas[1], shas[0]]);
    expect((await api.get(repo(project.id, '/commits'), { query: { until: '2000-01-01T00:00:00Z' } })).body).toEqual([]);
    expect((await api.get(repo(project.id, '/commits'), { query: { since: 'yesterday-ish' } })).body).toEqual({ error: 'since is invalid' });
    const one = await api.get(repo(project.id, `/commits/${shas[1]}`));
    expect(one.body).toMatchObject({ id: shas[1], parent_ids: [shas[0]], stats: { additions: 1, deletions: 0, total: 1 }, project_id: project.id });
    expect((await api.get(repo(project.id, '/commits/master'), { query: { stats: false } })).body).not.toHaveProperty('stats');
    expect(await api.get(repo(project.id, '/commits/0000000'))).toMatchObject({ status: 404, body: { message: '404 Commit Not Found' } });
    expect(await api.get(repo(project.id, '/files/none.txt'), { query: { ref: 'master' } })).toMatchObject({ status: 404, body: { message: '404 File Not Found' } });
    expect(await api.get(repo(project.id, '/files/a.txt'))).toMatchObject({ status: 400, body: { error: 'ref is missing' } });
  });

  it("writes objects git reads back: git cat-file on a bare repository made from the API's data", async () => {
    const project = await createProject(api);
    const made = (
      await commitTo(project.id, { branch: 'master', commit_message: 'Real git\n', actions: [create('docs/guide.md', '# Guide\n'), create('README', 'hi\n')] })
    ).body;
    const dir = mkdtempSync(join(tmpdir(), 'forgelog-cat-file-'));
    try {
      execFileSync('/usr/bin/git', ['init', '--bare', '-q', dir]);
      // Loose objects, zlib-deflated as git stores them, from the object store.
      const { rows } = await sql<{ sha: string; type: string; content: Buffer }>`select sha, type, content from repository_objects where project_id = ${project.id}`.execute(api.handle.db);
      for (const row of rows) {
        const bytes = Buffer.concat([Buffer.from(`${row.type} ${row.content.length}\0`), Buffer.from(row.content)]);
        mkdirSync(join(dir, 'objects', row.sha.slice(0, 2)), { recursive: true });
        writeFileSync(join(dir, 'objects', row.sha.slice(0, 2), row.sha.slice(2)), deflateSync(bytes));
      }
      const git = (...args: string[]) => execFileSync('/usr/bin/git', args, { cwd: dir }).toString();
      const tree = await api.get(repo(project.id, '/tree'));
      const shown = git('cat-file', '-p', made.id);
      expect(shown).toContain(`author Administrator <${made.author_email}> ${Date.parse(made.authored_date) / 1000} +0000`);
      const treeSha = /^tree ([0-9a-f]{40})$/m.exec(shown)![1]!;
      expect(git('cat-file', '-t', treeSha).trim()).toBe('tree');
      const listing = git('ls-tree', '-r', made.id);
      const guide = tree.body.find((e: any) => e.name === 'docs');
      expect(git('cat-file', '-p', `${made.id}:docs`)).toContain(`guide.md`);
      expect(git('rev-parse', `${made.id}:docs`).trim()).toBe(guide.id);
      expect(git('cat-file', '-p', `${made.id}:docs/guide.md`)).toBe('# Guide\n');
      expect(listing).toContain('100644 blob');
      execFileSync('/usr/bin/git', ['update-ref', 'refs/heads/master', made.id], { cwd: dir });
      execFileSync('/usr/bin/git', ['fsck', '--strict', '--no-dangling'], { cwd: dir });
      expect(git('log', '--format=%H', 'master').trim().split('\n')).toEqual((await api.get(repo(project.id, '/commits'))).body.map((c: any) => c.id));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// Reporters (and anyone who sees a public project) read; developers push; a private project of others is 404.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/repository/branches':            { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, developer: 200, admin: 200, blocked: 403 }, public: { anonymous: 200, nonMember: 200, guest: 200, external: 200 } },
  'GET /projects/:id/repository/branches/master':     { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, maintainer: 200 }, public: { anonymous: 200, nonMember: 200 } },
  'POST /projects/:id/repository/branches':           { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 201, maintainer: 201, owner: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 201 } },
  'DELETE /projects/:id/repository/branches/:branch': { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 204, admin: 204 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 204 } },
  'POST /projects/:id/repository/commits':            { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 201, maintainer: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 201 } },
  'GET /projects/:id/repository/commits':             { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200 }, public: { anonymous: 200, nonMember: 200 } },
  'GET /projects/:id/repository/commits/master':      { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200 }, public: { anonymous: 200, guest: 200 } },
  'GET /projects/:id/repository/tree':                { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200 }, public: { anonymous: 200, nonMember: 200 } },
  'GET /projects/:id/repository/files/README.md':     { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200 }, public: { anonymous: 200, nonMember: 200 } },
  'GET /projects/:id/repository/files/README.md/raw': { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200 }, public: { anonymous: 200, nonMember: 200 } },
  'GET /projects/:id/repository/files/README.md/blame': { private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 200, admin: 200 }, public: { anonymous: 200, nonMember: 200, guest: 200 } },
};

describe('permissions', () => {
  let callers: Callers;
  const projects = new Map<Visibility, number>();
  let counter = 0;
  beforeAll(async () => {
    callers = await createCallers(api, { prefix: 'repo' });
    for (const visibility of ['private', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      await commitTo(id, { branch: 'master', commit_message: 'Base', actions: [create('README.md', '# Hi\n')] });
      projects.set(visibility, id);
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const projectId = projects.get(visibility)!;
    const branch = `b-${++counter}`;
    if (path.endsWith(':branch')) await api.post(repo(projectId, '/branches'), { branch, ref: 'master' });
    const url = path.replace(':id', String(projectId)).replace(':branch', branch);
    const token = callers[caller].token;
    const body =
      method === 'POST' && path.endsWith('/commits')
        ? { branch: 'master', commit_message: `c${counter}`, actions: [create(`f${counter}.txt`, 'x')] }
        : method === 'POST'
          ? { branch, ref: 'master' }
          : undefined;
    const query = path.includes('/files/') ? { ref: 'master' } : undefined;
    return (await api.request(method, url, { token, ...(body ? { body } : {}), ...(query ? { query } : {}) })).status;
  });
});

describe('branch names PostgreSQL cannot index (issue 20, item 4)', () => {
  it('POST …/repository/branches and POST …/repository/commits refuse a name past what git keeps (255 bytes a component): "Branch name is invalid"', async () => {
    const project = await createProject(api, { initialize_with_readme: true });
    for (const branch of ['b'.repeat(1024 * 1024), `feature/${'é'.repeat(128)}`, `${'a/'.repeat(600)}b`]) {
      expect(await api.post(repo(project.id, '/branches'), { branch, ref: 'master' })).toMatchObject({ status: 400, body: { message: 'Branch name is invalid' } });
      const commit = await commitTo(project.id, { branch, start_branch: 'master', commit_message: 'x', actions: [create('long.txt', 'x')] });
      expect(commit).toMatchObject({ status: 400, body: { message: 'Branch name is invalid' } });
    }
    expect(((await api.get(repo(project.id, '/branches'))).body as any[]).map((b) => b.name)).toEqual(['master']);
    const longest = `feature/${'z'.repeat(255)}`;
    expect(await api.post(repo(project.id, '/branches'), { branch: longest, ref: 'master' })).toMatchObject({ status: 201, body: { name: longest } });
  });
});
