import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** POST …/repository/commits/:sha/cherry_pick and …/revert (GitLab 12's API::Commits; issue 23 §3). */

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  // Its projects' branches are protected by the tests themselves: none at a default branch's first write (default_branch_protection, test/http/git-push.test.ts).
  await api.put('/application/settings', { default_branch_protection: 0 });
});
afterAll(() => api.close());

const repo = (projectId: number, rest: string) => `/projects/${projectId}/repository${rest}`;
async function commit(projectId: number, branch: string, actions: object[], extra: Record<string, unknown> = {}) {
  const res = await api.post(repo(projectId, '/commits'), { branch, commit_message: extra.commit_message ?? `on ${branch}`, actions, ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; title: string };
}
const file = async (projectId: number, path: string, ref = 'master') => {
  const res = await api.get(repo(projectId, `/files/${encodeURIComponent(path)}`), { query: { ref } });
  return res.status === 200 ? Buffer.from(res.body.content, 'base64').toString() : res.status;
};
const eventCount = async (projectId: number) => (await api.repositoryEvents(projectId)).length;

describe('POST /projects/:id/repository/commits/:sha/cherry_pick', () => {
  it("applies the commit's change on the branch as a new commit by the caller, keeping its author (201, Entities::Commit)", async () => {
    const project = await createProject(api);
    await commit(project.id, 'master', [{ action: 'create', file_path: 'a.txt', content: 'a\n' }]);
    const fix = await commit(project.id, 'fix', [{ action: 'create', file_path: 'fix.txt', content: 'fixed\n' }], {
      start_branch: 'master',
      commit_message: 'Fix the thing\n\nIn detail.',
      author_name: 'Ada',
      author_email: 'ada@example.com',
    });
    await commit(project.id, 'master', [{ action: 'update', file_path: 'a.txt', content: 'a2\n' }]);
    const head = (await api.get(repo(project.id, '/commits/master'))).body.id;
    const res = await api.post(repo(project.id, `/commits/${fix.id}/cherry_pick`), { branch: 'master' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      title: 'Fix the thing',
      message: `Fix the thing\n\nIn detail.\n\n(cherry picked from commit ${fix.id})`,
      parent_ids: [head],
      author_name: 'Ada',
      author_email: 'ada@example.com',
      committer_name: 'Administrator',
    });
    expect(res.body.id).not.toBe(fix.id);
    expect(await file(project.id, 'fix.txt')).toBe('fixed\n');
    expect(await file(project.id, 'a.txt')).toBe('a2\n');
    expect((await api.repositoryEvents(project.id)).at(-1)).toMatchObject({ type: 'BranchUpdated', data: { branch: 'master', old_sha: head, new_sha: res.body.id } });
    // Picked again, it changes nothing: GitLab's refusal, and nothing written.
    const events = await eventCount(project.id);
    expect(await api.post(repo(project.id, `/commits/${fix.id}/cherry_pick`), { branch: 'master' })).toMatchObject({
      status: 400,
      body: { message: 'Sorry, we cannot cherry-pick this commit automatically. This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.' },
    });
    expect(await eventCount(project.id)).toBe(events);
  });

  it('answers 404 for an unknown commit or branch and 400 without a branch', async () => {
    const project = await createProject(api, { initialize_with_readme: true });
    const head = (await api.get(repo(project.id, '/commits/master'))).body.id;
    expect(await api.post(repo(project.id, `/commits/${'f'.repeat(40)}/cherry_pick`), { branch: 'master' })).toMatchObject({ status: 404, body: { message: '404 Commit Not Found' } });
    expect(await api.post(repo(project.id, `/commits/${head}/cherry_pick`), { branch: 'nope' })).toMatchObject({ status: 404, body: { message: '404 Branch Not Found' } });
    expect(await api.post(repo(project.id, `/commits/${head}/cherry_pick`), {})).toMatchObject({ status: 400, body: { error: 'branch is missing' } });
    expect(await api.post(repo(project.id, `/commits/${head}/revert`), { branch: '' })).toMatchObject({ status: 400, body: { error: 'branch is empty' } });
  });
});

describe('POST /projects/:id/repository/commits/:sha/revert', () => {
  it('takes the change back as a new commit by the caller; a conflict is refused', async () => {
    const project = await createProject(api);
    await commit(project.id, 'master', [{ action: 'create', file_path: 'a.txt', content: '1\n2\n3\n' }]);
    const change = await commit(project.id, 'master', [{ action: 'update', file_path: 'a.txt', content: '1\ntwo\n3\n' }, { action: 'create', file_path: 'b.txt', content: 'b\n' }], {
      commit_message: '  Spell two  ',
    });
    const res = await api.post(repo(project.id, `/commits/${change.id}/revert`), { branch: 'master' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ title: 'Revert "Spell two"', message: `Revert "Spell two"\n\nThis reverts commit ${change.id}`, parent_ids: [change.id], author_name: 'Administrator' });
    expect(await file(project.id, 'a.txt')).toBe('1\n2\n3\n');
    expect(await file(project.id, 'b.txt')).toBe(404);
    // Reverted again: nothing left to take back.
    expect(await api.post(repo(project.id, `/commits/${change.id}/revert`), { branch: 'master' })).toMatchObject({
      status: 400,
      body: { message: 'Sorry, we cannot revert this commit automatically. This commit may already have been reverted, or a more recent commit may have updated some of its content.' },
    });
    // A later change of the same lines conflicts.
    const again = await commit(project.id, 'master', [{ action: 'update', file_path: 'a.txt', content: '1\nII\n3\n' }]);
    await commit(project.id, 'master', [{ action: 'update', file_path: 'a.txt', content: '1\n2nd\n3\n' }]);
    expect((await api.post(repo(project.id, `/commits/${again.id}/revert`), { branch: 'master' })).status).toBe(400);
    expect(await file(project.id, 'a.txt')).toBe('1\n2nd\n3\n');
  });

  it("names the commit by GitLab's Commit#title: a first line of 100 characters or more is cut at a space within 80", async () => {
    const project = await createProject(api);
    const long = `${'word '.repeat(24)}end of a very long title`;
    const change = await commit(project.id, 'master', [{ action: 'create', file_path: 'long.txt', content: 'x\n' }], { commit_message: `${long}\r\nbody` });
    const res = await api.post(repo(project.id, `/commits/${change.id}/revert`), { branch: 'master' });
    expect(res.status).toBe(201);
    // 'word ' × 16 is 80 characters: the cut is at the space that ends the 16th word.
    expect(res.body.message).toBe(`Revert "${'word '.repeat(15)}word…"\n\nThis reverts commit ${change.id}`);
  });

  it("names a merged merge request in a merge commit's revert, and lists its commits in a cherry-pick", async () => {
    const project = await createProject(api, { initialize_with_readme: true });
    const first = await commit(project.id, 'feature', [{ action: 'create', file_path: 'one.txt', content: '1\n' }], { start_branch: 'master', commit_message: 'First' });
    const second = await commit(project.id, 'feature', [{ action: 'create', file_path: 'two.txt', content: '2\n' }], { commit_message: 'Second' });
    expect((await api.post(repo(project.id, '/branches'), { branch: 'stable', ref: 'master' })).status).toBe(201);
    const mr = await api.post(`/projects/${project.id}/merge_requests`, { source_branch: 'feature', target_branch: 'master', title: 'Feature' });
    const merged = await api.put(`/projects/${project.id}/merge_requests/${mr.body.iid}/merge`, {});
    expect(merged.status).toBe(200);
    const mergeSha = merged.body.merge_commit_sha;
    const picked = await api.post(repo(project.id, `/commits/${mergeSha}/cherry_pick`), { branch: 'stable' });
    expect(picked.status).toBe(201);
    const mergeMessage = (await api.get(repo(project.id, `/commits/${mergeSha}`))).body.message;
    expect(picked.body.message).toBe(`${mergeMessage}\n\n(cherry picked from commit ${mergeSha})\n\n${first.id.slice(0, 8)} First\n${second.id.slice(0, 8)} Second`);
    expect(await file(project.id, 'two.txt', 'stable')).toBe('2\n');
    const reverted = await api.post(repo(project.id, `/commits/${mergeSha}/revert`), { branch: 'master' });
    expect(reverted.status).toBe(201);
    expect(reverted.body.message).toBe(`Revert "${mergeMessage.split('\n')[0]}"\n\nThis reverts merge request !${mr.body.iid}`);
    expect(await file(project.id, 'one.txt')).toBe(404);
    expect(await api.post(repo(project.id, `/commits/${mergeSha}/revert`), { branch: 'master' })).toMatchObject({
      status: 400,
      body: { message: 'Sorry, we cannot revert this merge request automatically. This merge request may already have been reverted, or a more recent commit may have updated some of its content.' },
    });
  });

  it('refuses a branch the caller may not push to (403) before looking at the commit', async () => {
    const callers = await createCallers(api, { prefix: 'pick-push' });
    const project = await createProject(api, { initialize_with_readme: true });
    await api.post(`/projects/${project.id}/members`, { user_id: callers.developer.user!.id, access_level: 30 });
    expect((await api.post(`/projects/${project.id}/protected_branches`, { name: 'master' })).status).toBe(201);
    expect(await api.post(repo(project.id, `/commits/${'f'.repeat(40)}/revert`), { branch: 'master' }, { token: callers.developer.token })).toMatchObject({
      status: 403,
      body: { message: '403 Forbidden - You are not allowed to push into this branch' },
    });
  });
});

// Reporters may read the code but not push: 403; a private project of others is 404; anonymous 401.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'POST cherry_pick': { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 201, maintainer: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 201 } },
  'POST revert':      { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 201, maintainer: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403, reporter: 403, developer: 201 } },
};

describe('permissions', () => {
  let callers: Callers;
  const projects = new Map<Visibility, number>();
  let counter = 0;
  beforeAll(async () => {
    callers = await createCallers(api, { prefix: 'pick' });
    for (const visibility of ['private', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      await commit(id, 'master', [{ action: 'create', file_path: 'README.md', content: '# Hi\n' }]);
      projects.set(visibility, id);
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const id = projects.get(visibility)!;
    const n = ++counter;
    const made =
      endpoint === 'POST revert'
        ? await commit(id, 'master', [{ action: 'create', file_path: `r-${n}.txt`, content: 'x' }])
        : await commit(id, `side-${n}`, [{ action: 'create', file_path: `c-${n}.txt`, content: 'x' }], { start_branch: 'master' });
    const action = endpoint === 'POST revert' ? 'revert' : 'cherry_pick';
    return (await api.post(repo(id, `/commits/${made.id}/${action}`), { branch: 'master' }, { token: callers[caller].token })).status;
  });
});
