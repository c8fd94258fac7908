import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * API::Files' writes (GitLab 12): POST, PUT and DELETE /projects/:id/repository/files/:file_path,
 * each one commit of one action through Files::Create/Update/DeleteService (issue 23 §3).
 */

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  // Its projects' branches are protected by the tests themselves: none at a default branch's first write (default_branch_protection, test/http/git-push.test.ts).
  await api.put('/application/settings', { default_branch_protection: 0 });
});
afterAll(() => api.close());

const fileUrl = (projectId: number, path: string) => `/projects/${projectId}/repository/files/${encodeURIComponent(path)}`;
const write = (method: 'POST' | 'PUT' | 'DELETE', projectId: number, path: string, body: Record<string, unknown>, token?: string | null) =>
  api.request(method, fileUrl(projectId, path), { body, ...(token === undefined ? {} : { token }) });
const read = async (projectId: number, path: string, ref = 'master') => {
  const res = await api.get(fileUrl(projectId, path), { query: { ref } });
  return res.status === 200 ? Buffer.from(res.body.content, 'base64').toString() : res.status;
};
const head = async (projectId: number, branch = 'master') => (await api.get(`/projects/${projectId}/repository/branches/${encodeURIComponent(branch)}`)).body.commit;
const eventCount = async (projectId: number) => (await api.repositoryEvents(projectId)).length;

describe('POST /projects/:id/repository/files/:file_path', () => {
  it('commits the new file on the branch and answers its path and branch (201)', async () => {
    const project = await createProject(api, { initialize_with_readme: true });
    const before = await head(project.id);
    const res = await write('POST', project.id, 'docs/guide.md', { branch: 'master', content: '# Guide\n', commit_message: 'Add the guide' });
    expect(res).toMatchObject({ status: 201, body: { file_path: 'docs/guide.md', branch: 'master' } });
    expect(Object.keys(res.body)).toEqual(['file_path', 'branch']);
    expect(await read(project.id, 'docs/guide.md')).toBe('# Guide\n');
    const after = await head(project.id);
    expect(after).toMatchObject({ message: 'Add the guide', parent_ids: [before.id], author_name: 'Administrator', committer_name: 'Administrator' });
    const events = await api.repositoryEvents(project.id);
    expect(events.at(-1)).toMatchObject({ type: 'BranchUpdated', data: { branch: 'master', old_sha: before.id, new_sha: after.id, commits: [after.id] } });
  });

  it('starts the default branch of an empty repository, takes base64 and an author', async () => {
    const project = await createProject(api);
    const res = await write('POST', project.id, 'bin/tool', {
      branch: 'master',
      content: Buffer.from([0, 1, 2, 255]).toString('base64'),
      encoding: 'base64',
      commit_message: 'Tool',
      author_name: 'Ada',
      author_email: 'ada@example.com',
    });
    expect(res.status).toBe(201);
    const file = await api.get(fileUrl(project.id, 'bin/tool'), { query: { ref: 'master' } });
    expect(Buffer.from(file.body.content, 'base64')).toEqual(Buffer.from([0, 1, 2, 255]));
    expect(await head(project.id)).toMatchObject({ parent_ids: [], author_name: 'Ada', author_email: 'ada@example.com', committer_name: 'Administrator' });
    expect((await api.get(`/projects/${project.id}`)).body.default_branch).toBe('master');
  });

  it('creates a new branch from start_branch, and refuses what Commits::CreateService refuses (400), writing nothing', async () => {
    const project = await createProject(api, { initialize_with_readme: true });
    expect(await write('POST', project.id, 'new.txt', { branch: 'topic', start_branch: 'master', content: 'n', commit_message: 'On topic' })).toMatchObject({
      status: 201,
      body: { file_path: 'new.txt', branch: 'topic' },
    });
    expect(await read(project.id, 'new.txt', 'topic')).toBe('n');
    expect(await read(project.id, 'new.txt')).toBe(404);
    const events = await eventCount(project.id);
    const refusals: [Record<string, unknown>, string][] = [
      [{ branch: 'master', content: 'again', commit_message: 'x' }, 'A file with this name already exists'],
      [{ branch: 'topic', start_branch: 'master', content: 'x', commit_message: 'x' }, "A branch called 'topic' already exists. Switch to that branch in order to make changes"],
      [{ branch: 'other', start_branch: 'nowhere', content: 'x', commit_message: 'x' }, 'You can only create or edit files when you are on a branch'],
    ];
    for (const [body, message] of refusals) {
      const path = body.content === 'again' ? 'README.md' : `x-${message.length}.txt`;
      expect(await write('POST', project.id, path, body)).toMatchObject({ status: 400, body: { message } });
    }
    expect(await eventCount(project.id)).toBe(events);
    expect(await read(project.id, 'README.md')).toMatch(/^# /);
  });

  it("answers Grape's parameter errors in declaration order, before looking at the project", async () => {
    const project = await createProject(api, { initialize_with_readme: true });
    expect(await write('POST', project.id, 'a.txt', {})).toMatchObject({ status: 400, body: { error: 'branch is missing, commit_message is missing, content is missing' } });
    expect(await write('POST', project.id, 'a.txt', { branch: '', commit_message: '', content: '' })).toMatchObject({ status: 400, body: { error: 'branch is empty, commit_message is empty' } });
    expect(await write('POST', project.id, 'a.txt', { branch: 'master', commit_message: 'm', content: 'x', encoding: 'text' })).toMatchObject({
      status: 400,
      body: { error: 'encoding does not have a valid value' },
    });
    expect(await write('POST', project.id, '../etc/passwd', { branch: 'master', commit_message: 'm', content: 'x' })).toMatchObject({
      status: 400,
      body: { error: 'file_path should be a valid file path' },
    });
    expect(await write('POST', 999_999, 'a.txt', {})).toMatchObject({ status: 400, body: { error: 'branch is missing, commit_message is missing, content is missing' } });
    expect(await write('POST', 999_999, 'a.txt', { branch: 'master', commit_message: 'm', content: 'x' })).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });
});

describe('PUT /projects/:id/repository/files/:file_path', () => {
  it('commits the new content (200), honours last_commit_id, and refuses a file that is not there', async () => {
    const project = await createProject(api);
    await write('POST', project.id, 'a.txt', { branch: 'master', content: 'one', commit_message: 'One' });
    const first = await head(project.id);
    await write('POST', project.id, 'b.txt', { branch: 'master', content: 'b', commit_message: 'B' });
    // a.txt last changed in `first`: that is what the caller saw.
    expect(await write('PUT', project.id, 'a.txt', { branch: 'master', content: 'two', commit_message: 'Two', last_commit_id: first.id })).toMatchObject({
      status: 200,
      body: { file_path: 'a.txt', branch: 'master' },
    });
    expect(await read(project.id, 'a.txt')).toBe('two');
    const events = await eventCount(project.id);
    expect(await write('PUT', project.id, 'a.txt', { branch: 'master', content: 'three', commit_message: 'Three', last_commit_id: first.id })).toMatchObject({
      status: 400,
      body: { message: 'You are attempting to update a file that has changed since you started editing it.' },
    });
    expect(await write('PUT', project.id, 'missing.txt', { branch: 'master', content: 'x', commit_message: 'x' })).toMatchObject({
      status: 400,
      body: { message: "A file with this name doesn't exist" },
    });
    expect(await eventCount(project.id)).toBe(events);
    expect(await read(project.id, 'a.txt')).toBe('two');
    // An executable keeps its mode.
    await api.post(`/projects/${project.id}/repository/commits`, { branch: 'master', commit_message: 'chmod', actions: [{ action: 'chmod', file_path: 'b.txt', execute_filemode: true }] });
    expect((await write('PUT', project.id, 'b.txt', { branch: 'master', content: 'bb', commit_message: 'BB' })).status).toBe(200);
    const tree = (await api.get(`/projects/${project.id}/repository/tree`)).body;
    expect(tree.find((e: any) => e.name === 'b.txt').mode).toBe('100755');
  });
});

describe('DELETE /projects/:id/repository/files/:file_path', () => {
  it('commits the removal (204) and refuses a file that is not there', async () => {
    const project = await createProject(api, { initialize_with_readme: true });
    await write('POST', project.id, 'old.txt', { branch: 'master', content: 'o', commit_message: 'Old' });
    const res = await write('DELETE', project.id, 'old.txt', { branch: 'master', commit_message: 'Remove old' });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await read(project.id, 'old.txt')).toBe(404);
    expect(await head(project.id)).toMatchObject({ message: 'Remove old' });
    expect(await write('DELETE', project.id, 'old.txt', { branch: 'master', commit_message: 'Again' })).toMatchObject({
      status: 400,
      body: { message: "A file with this name doesn't exist" },
    });
    expect(await write('DELETE', project.id, 'old.txt', {})).toMatchObject({ status: 400, body: { error: 'branch is missing, commit_message is missing' } });
  });
});

describe('protected branches', () => {
  it("refuse a developer's file on a branch they may not push to, with the service's 400", async () => {
    const callers = await createCallers(api, { prefix: 'files-push' });
    const project = await createProject(api, { initialize_with_readme: true });
    await api.post(`/projects/${project.id}/members`, { user_id: callers.developer.user!.id, access_level: 30 });
    expect((await api.post(`/projects/${project.id}/protected_branches`, { name: 'master' })).status).toBe(201);
    const body = { branch: 'master', content: 'x', commit_message: 'x' };
    expect(await write('POST', project.id, 'dev.txt', body, callers.developer.token)).toMatchObject({ status: 400, body: { message: 'You are not allowed to push into this branch' } });
    expect((await write('POST', project.id, 'dev.txt', { ...body, branch: 'dev-topic', start_branch: 'master' }, callers.developer.token)).status).toBe(201);
    expect((await write('POST', project.id, 'dev.txt', body)).status).toBe(201);
  });
});

// Developers write; reporters and guests may not (403); a private project of others is 404; anonymous 401.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'POST /projects/:id/repository/files/:path':   { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 201, maintainer: 201, owner: 201, admin: 201, blocked: 403 }, public: { anonymous: 401, nonMember: 403, guest: 403, reporter: 403, developer: 201 } },
  'PUT /projects/:id/repository/files/:path':    { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 200, maintainer: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 200 } },
  'DELETE /projects/:id/repository/files/:path': { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 204, maintainer: 204, admin: 204 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 204 } },
};

describe('permissions', () => {
  let callers: Callers;
  const projects = new Map<Visibility, number>();
  let counter = 0;
  beforeAll(async () => {
    callers = await createCallers(api, { prefix: 'files' });
    for (const visibility of ['private', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      await write('POST', id, 'README.md', { branch: 'master', content: '# Hi\n', commit_message: 'Base' });
      projects.set(visibility, id);
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method] = endpoint.split(' ') as ['POST' | 'PUT' | 'DELETE'];
    const projectId = projects.get(visibility)!;
    const path = `f-${++counter}.txt`;
    if (method !== 'POST') expect((await write('POST', projectId, path, { branch: 'master', content: 'x', commit_message: 'setup' })).status).toBe(201);
    const body = method === 'DELETE' ? { branch: 'master', commit_message: `c${counter}` } : { branch: 'master', content: `c${counter}`, commit_message: `c${counter}` };
    return (await write(method, projectId, path, body, callers[caller].token)).status;
  });
});
