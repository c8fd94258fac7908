import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, type ProjectFixture } from '../support/fixtures.js';
import { createCallers, type Callers } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Every way a ref is written goes through GitLab's pre-receive check (Gitlab::Checks::BranchCheck,
 * which Gitaly runs for the branches API, the commits API and merges alike): a protected
 * branch is created, pushed to or deleted only by who may. And a branch created in an empty
 * repository starts with GitLab 12's README.md commit on master (Branches::CreateService).
 */

let api: TestServer;
let callers: Callers;
beforeAll(async () => {
  api = await startTestServer();
  // Its projects' branches are protected by the tests themselves: none at a default branch's first write (default_branch_protection, test/http/git-push.test.ts).
  await api.put('/application/settings', { default_branch_protection: 0 });
  callers = await createCallers(api, { prefix: 'refs' });
});
afterAll(() => api.close());

const repo = (projectId: number, rest = '') => `/projects/${projectId}/repository${rest}`;
const create = (path: string, content: string) => ({ action: 'create', file_path: path, content });
const CREATE_PROTECTED = 'You are not allowed to create protected branches on this project.';

/** A project with master (one commit), the developer and the maintainer as members. */
async function projectWithMaster(): Promise<{ project: ProjectFixture; master: string }> {
  const project = await createProject(api);
  await api.post(`/projects/${project.id}/members`, { user_id: callers.developer.user!.id, access_level: 30 });
  await api.post(`/projects/${project.id}/members`, { user_id: callers.maintainer.user!.id, access_level: 40 });
  const made = await api.post(repo(project.id, '/commits'), { branch: 'master', commit_message: 'Base', actions: [create('a.txt', 'a')] });
  expect(made.status).toBe(201);
  return { project, master: made.body.id };
}

const protect = async (projectId: number, body: Record<string, unknown>) => expect((await api.post(`/projects/${projectId}/protected_branches`, body)).status).toBe(201);

describe('POST /projects/:id/repository/branches', () => {
  describe('a branch a protection rule matches', () => {
    it('is refused to a developer who may neither push nor merge to it, as the commits API refuses it', async () => {
      const { project } = await projectWithMaster();
      await protect(project.id, { name: 'rel-*', push_access_level: 40, merge_access_level: 40 });
      const before = await api.repositoryEvents(project.id);
      const dev = callers.developer.token;
      // GitLab: lib/api/branches.rb renders Branches::CreateService's PreReceiveError with 400.
      expect(await api.post(repo(project.id, '/branches'), { branch: 'rel-x', ref: 'master' }, { token: dev })).toMatchObject({
        status: 400,
        body: { message: CREATE_PROTECTED },
      });
      expect(await api.post(repo(project.id, '/commits'), { branch: 'rel-x', start_branch: 'master', commit_message: 'x', actions: [create('b.txt', 'b')] }, { token: dev })).toMatchObject({
        status: 403,
        body: { message: '403 Forbidden - You are not allowed to push into this branch' },
      });
      expect(await api.repositoryEvents(project.id)).toEqual(before);
      expect((await api.get(repo(project.id, '/branches/rel-x'))).status).toBe(404);
      // A maintainer may push there: created.
      const made = await api.post(repo(project.id, '/branches'), { branch: 'rel-x', ref: 'master' }, { token: callers.maintainer.token });
      expect(made).toMatchObject({ status: 201, body: { name: 'rel-x', protected: true, can_push: true } });
    });

    it('is created by a developer who may push to it', async () => {
      const { project } = await projectWithMaster();
      await protect(project.id, { name: 'rel-*', push_access_level: 30, merge_access_level: 40 });
      const made = await api.post(repo(project.id, '/branches'), { branch: 'rel-1', ref: 'master' }, { token: callers.developer.token });
      expect(made).toMatchObject({ status: 201, body: { name: 'rel-1', protected: true, developers_can_push: true, can_push: true } });
    });

    it('is created by one who may only merge to it from a commit of a protected branch, from nothing else', async () => {
      const { project, master } = await projectWithMaster();
      await protect(project.id, { name: 'master', push_access_level: 40, merge_access_level: 40 });
      await protect(project.id, { name: 'rel-*', push_access_level: 40, merge_access_level: 30 });
      const topic = await api.post(repo(project.id, '/commits'), { branch: 'topic', start_branch: 'master', commit_message: 'T', actions: [create('t.txt', 't')] });
      expect(topic.status).toBe(201);
      const dev = callers.developer.token;
      expect(await api.post(repo(project.id, '/branches'), { branch: 'rel-2', ref: 'topic' }, { token: dev })).toMatchObject({
        status: 400,
        body: { message: 'You can only use an existing protected branch ref as the basis of a new protected branch.' },
      });
      const made = await api.post(repo(project.id, '/branches'), { branch: 'rel-2', ref: master.slice(0, 12) }, { token: dev });
      expect(made).toMatchObject({ status: 201, body: { name: 'rel-2', commit: { id: master }, protected: true, can_push: false } });
      expect((await api.repositoryEvents(project.id)).at(-1)).toMatchObject({ type: 'BranchCreated', data: { branch: 'rel-2', new_sha: master } });
    });

    it('matches a wildcard in time linear in the name: a pattern full of stars against a long name', async () => {
      const { project } = await projectWithMaster();
      // Compiled to a regular expression with a lazy `.*?` per star, this backtracks for ages.
      await protect(project.id, { name: `${'*a'.repeat(24)}*b`, push_access_level: 40, merge_access_level: 40 });
      const long = 'a'.repeat(200);
      const made = await api.post(repo(project.id, '/branches'), { branch: long, ref: 'master' }, { token: callers.developer.token });
      expect(made).toMatchObject({ status: 201, body: { name: long, protected: false } });
      const protectedOne = await api.post(repo(project.id, '/branches'), { branch: `${long}b`, ref: 'master' }, { token: callers.developer.token });
      expect(protectedOne).toMatchObject({ status: 400, body: { message: CREATE_PROTECTED } });
    });
  });

  describe('in an empty repository', () => {
    it("first commits an empty README.md to master as the caller, 'Add README.md', then creates the branch from the ref", async () => {
      const project = await createProject(api);
      await api.post(`/projects/${project.id}/members`, { user_id: callers.developer.user!.id, access_level: 30 });
      const dev = callers.developer;
      const made = await api.post(repo(project.id, '/branches'), { branch: 'feature', ref: 'master' }, { token: dev.token });
      expect(made.status).toBe(201);
      const user = (await api.get(`/users/${dev.user!.id}`)).body;
      const email = (await api.get('/user', { token: dev.token })).body.email;
      expect(made.body).toMatchObject({
        name: 'feature',
        commit: { title: 'Add README.md', message: 'Add README.md', parent_ids: [], author_name: user.name, author_email: email, committer_name: user.name, committer_email: email },
        default: false,
        can_push: true,
      });
      const readme = made.body.commit.id;
      expect((await api.get(repo(project.id, '/branches'))).body.map((b: any) => [b.name, b.commit.id, b.default])).toEqual([
        ['feature', readme, false],
        ['master', readme, true],
      ]);
      expect((await api.get(`/projects/${project.id}`)).body.default_branch).toBe('master');
      const file = await api.get(repo(project.id, '/files/README.md'), { query: { ref: 'master' } });
      expect(file.body).toMatchObject({ file_path: 'README.md', size: 0, content: '', last_commit_id: readme });
      expect((await api.get(repo(project.id, '/tree'))).body.map((e: any) => e.path)).toEqual(['README.md']);
      expect(await api.repositoryEvents(project.id)).toMatchObject([
        { type: 'BranchCreated', data: { branch: 'master', new_sha: readme, commits: [readme], commit_details: [{ message: 'Add README.md', author_name: user.name }] } },
        { type: 'BranchCreated', data: { branch: 'feature', new_sha: readme, commits: [] } },
      ]);
    });

    it('is refused as a whole, no README commit left behind, when the ref names nothing or the branch is master', async () => {
      const project = await createProject(api);
      expect(await api.post(repo(project.id, '/branches'), { branch: 'feature', ref: 'nowhere' })).toMatchObject({ status: 400, body: { message: 'Invalid reference name: nowhere' } });
      expect(await api.repositoryEvents(project.id)).toEqual([]);
      expect((await api.get(repo(project.id, '/branches'))).body).toEqual([]);
      const made = await api.post(repo(project.id, '/branches'), { branch: 'master', ref: 'master' });
      expect(made).toMatchObject({ status: 400, body: { message: 'Branch already exists' } });
      expect(await api.repositoryEvents(project.id)).toEqual([]);
    });
  });
});

describe('DELETE /projects/:id/repository/branches/:branch', () => {
  it("is refused by the branch check with GitLab's messages: a protected branch but by a maintainer, never the default branch", async () => {
    const { project } = await projectWithMaster();
    await protect(project.id, { name: 'rel-*', push_access_level: 30, merge_access_level: 30 });
    expect((await api.post(repo(project.id, '/branches'), { branch: 'rel-1', ref: 'master' }, { token: callers.developer.token })).status).toBe(201);
    // GitLab: Branches::DeleteService renders the PreReceiveError's message with 400.
    expect(await api.del(repo(project.id, '/branches/rel-1'), { token: callers.developer.token })).toMatchObject({
      status: 400,
      body: { message: 'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.' },
    });
    expect(await api.del(repo(project.id, '/branches/master'), { token: callers.maintainer.token })).toMatchObject({
      status: 400,
      body: { message: 'The default branch of a project cannot be deleted.' },
    });
    expect((await api.del(repo(project.id, '/branches/rel-1'), { token: callers.maintainer.token })).status).toBe(204);
    expect((await api.get(repo(project.id, '/branches'))).body.map((b: any) => b.name)).toEqual(['master']);
  });
});

describe('GET /projects/:id/repository/branches', () => {
  it('answers a page of the branches by name, counted, with GitLab 12 search: a case-insensitive part of the name', async () => {
    const { project } = await projectWithMaster();
    for (const name of ['Feature-b', 'feature-a', 'fix-1', 'zeta']) expect((await api.post(repo(project.id, '/branches'), { branch: name, ref: 'master' })).status).toBe(201);
    const all = await api.get(repo(project.id, '/branches'));
    expect(all.status).toBe(200);
    // Gitaly sorts the names by their bytes (FindLocalBranches, SortBy NAME): upper case first.
    const names = all.body.map((b: { name: string }) => b.name);
    expect(names).toEqual(['Feature-b', 'feature-a', 'fix-1', 'master', 'zeta']);
    expect(all.headers.get('x-total')).toBe('5');

    const second = await api.get(repo(project.id, '/branches?per_page=2&page=2'));
    expect(second.status).toBe(200);
    expect(second.body.map((b: { name: string }) => b.name)).toEqual(names.slice(2, 4));
    expect(second.headers.get('x-total')).toBe('5');
    expect(second.headers.get('x-total-pages')).toBe('3');
    expect(second.headers.get('x-page')).toBe('2');
    expect(second.headers.get('x-next-page')).toBe('3');
    expect(second.headers.get('x-prev-page')).toBe('1');

    const found = await api.get(repo(project.id, '/branches?search=FEATURE'));
    expect(found.body.map((b: { name: string }) => b.name)).toEqual(['Feature-b', 'feature-a']);
    expect(found.headers.get('x-total')).toBe('2');
    expect(found.body[0]).toMatchObject({ merged: false, protected: false, default: false, can_push: true });
    expect((await api.get(repo(project.id, '/branches?search=nothing'))).body).toEqual([]);
  });
});

describe('merged', () => {
  // A branch's `merged` is kept per default branch head (reachableAmong): the answer for one head never holds for the next.
  it('follows the default branch: not merged while master does not reach the branch, merged once a merge makes it reach it', async () => {
    const { project } = await projectWithMaster();
    const topic = await api.post(repo(project.id, '/commits'), { branch: 'topic', start_branch: 'master', commit_message: 'Topic', actions: [create('t.txt', 't')] });
    expect(topic.status).toBe(201);
    const mergedOf = async () => (await api.get(repo(project.id, '/branches'))).body.find((b: { name: string }) => b.name === 'topic').merged;
    expect(await mergedOf()).toBe(false);
    expect(await mergedOf()).toBe(false);
    expect((await api.get(repo(project.id, '/branches/topic'))).body.merged).toBe(false);
    const mr = await api.post(`/projects/${project.id}/merge_requests`, { source_branch: 'topic', target_branch: 'master', title: 'Topic' });
    expect(mr).toMatchObject({ status: 201, body: { merge_status: 'can_be_merged' } });
    expect(await api.put(`/projects/${project.id}/merge_requests/${mr.body.iid}/merge`, {})).toMatchObject({ status: 200, body: { state: 'merged' } });
    expect(await mergedOf()).toBe(true);
    expect((await api.get(repo(project.id, '/branches/topic'))).body.merged).toBe(true);
    // A new commit on the branch: master no longer reaches its head.
    expect((await api.post(repo(project.id, '/commits'), { branch: 'topic', commit_message: 'More', actions: [create('u.txt', 'u')] })).status).toBe(201);
    expect(await mergedOf()).toBe(false);
  });
});
