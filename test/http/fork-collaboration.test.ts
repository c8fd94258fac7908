import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createProject, eventually, settled } from '../support/fixtures.js';
import { basicAuth, gitScratch, withToken } from '../support/git.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * `allow_collaboration` on a merge request from a fork (GitLab 12.10: Gitlab::UserAccess#
 * can_push_to_branch? → Project#branch_allows_collaboration?, GitAccess's
 * any_branch_allows_collaboration?, Gitlab::Checks::PushCheck): who may merge it into its
 * target may push to its source branch in the fork — by git, the commits API and a rebase —
 * while it is open and the branch is not protected; nothing else of the fork.
 */

const { git, result: gitResult, newDir, remove } = gitScratch('forgelog-collaboration-');

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(async () => {
  await api.close();
  remove();
});

const repo = (projectId: number, rest = '') => `/projects/${projectId}/repository${rest}`;
const mrs = (projectId: number, rest = '') => `/projects/${projectId}/merge_requests${rest}`;

async function commitVia(projectId: number, token: string, branch: string, path: string, extra: Record<string, unknown> = {}) {
  return api.post(repo(projectId, '/commits'), { branch, commit_message: `write ${path}`, actions: [{ action: 'create', file_path: path, content: `${path}\n` }], ...extra }, { token });
}
const headOf = async (projectId: number, branch: string) => (await api.get(repo(projectId, `/branches/${branch}`))).body.commit?.id as string | undefined;

/**
 * A public upstream of root's (master protected) with a maintainer (bob), a developer (dan) and a reporter (rita);
 * alice's fork with `feature` (merge request allowing collaboration) and `solo` (one that does not).
 */
async function world() {
  const upstream = await createProject(api, { visibility: 'public', initialize_with_readme: true });
  const [alice, bob, dan, rita, eve] = await Promise.all([api.createUser(), api.createUser(), api.createUser(), api.createUser(), api.createUser()]);
  await addMember(api, 'projects', upstream.id, bob.user.id, 40);
  await addMember(api, 'projects', upstream.id, dan.user.id, 30);
  await addMember(api, 'projects', upstream.id, rita.user.id, 20);
  const fork = (await api.post(`/projects/${upstream.id}/fork`, {}, { token: alice.token })).body as { id: number; http_url_to_repo: string };
  for (const branch of ['feature', 'solo']) expect((await commitVia(fork.id, alice.token, branch, `${branch}.txt`, { start_branch: 'master' })).status).toBe(201);
  const open = (branch: string, allow: boolean) =>
    api.post(mrs(fork.id), { title: branch, source_branch: branch, target_branch: 'master', target_project_id: upstream.id, allow_collaboration: allow }, { token: alice.token });
  const collaborative = await open('feature', true);
  expect(collaborative.body).toMatchObject({ allow_collaboration: true });
  expect((await open('solo', false)).body).toMatchObject({ allow_collaboration: false });
  return { upstream, fork, alice, bob, dan, rita, eve, iid: collaborative.body.iid as number };
}

describe('allow_collaboration', () => {
  it("lets who may merge push to the source branch through the commits API, nothing else of the fork's", async () => {
    const w = await world();
    // The target's maintainer: they may merge into its master (protected, as the instance's default branch protection does).
    const before = await headOf(w.fork.id, 'feature');
    const res = await commitVia(w.fork.id, w.bob.token, 'feature', 'by-bob.txt');
    expect(res.status).toBe(201);
    expect(res.body.parent_ids).toEqual([before]);
    expect(await headOf(w.fork.id, 'feature')).toBe(res.body.id);
    const refused = { status: 403, body: { message: '403 Forbidden - You are not allowed to push into this branch' } };
    // Not the other branches: one whose merge request does not allow it, the default branch, a new one.
    for (const [branch, extra] of [['solo', {}], ['master', {}], ['new', { start_branch: 'feature' }]] as const) {
      expect(await commitVia(w.fork.id, w.bob.token, branch, 'x.txt', extra)).toMatchObject(refused);
    }
    // Not who may not merge into the target branch (a developer, before master's protection; a reporter), nor a stranger, nor anonymous.
    for (const token of [w.dan.token, w.rita.token, w.eve.token]) expect(await commitVia(w.fork.id, token, 'feature', 'x.txt')).toMatchObject(refused);
    expect((await commitVia(w.fork.id, '', 'feature', 'x.txt')).status).toBe(401);
    // The files API asks push_code (API::Files `authorize! :push_code`): no collaboration there.
    const file = await api.post(repo(w.fork.id, '/files/y.txt'), { branch: 'feature', content: 'y', commit_message: 'y' }, { token: w.bob.token });
    expect(file).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    // The branch list shows it (Entities::Branch#can_push).
    const branches = (await api.get(repo(w.fork.id, '/branches'), { token: w.bob.token })).body as any[];
    expect(branches.map((b) => [b.name, b.can_push])).toEqual([
      ['feature', true],
      ['master', false],
      ['solo', false],
    ]);
    // Closed, the merge request lets no one in; reopened, again.
    expect((await api.put(mrs(w.upstream.id, `/${w.iid}`), { state_event: 'close' })).status).toBe(200);
    expect(await commitVia(w.fork.id, w.bob.token, 'feature', 'z.txt')).toMatchObject(refused);
    expect((await api.put(mrs(w.upstream.id, `/${w.iid}`), { state_event: 'reopen' })).status).toBe(200);
    expect((await commitVia(w.fork.id, w.bob.token, 'feature', 'z.txt')).status).toBe(201);
    // A protected source branch: its rules ask push_code in the fork.
    expect((await api.post(`/projects/${w.fork.id}/protected_branches`, { name: 'feature' }, { token: w.alice.token })).status).toBe(201);
    expect(await commitVia(w.fork.id, w.bob.token, 'feature', 'p.txt')).toMatchObject(refused);
  });

  it('lets them git push to that branch and refuses the rest of the push as GitLab does', async () => {
    const w = await world();
    const dir = newDir();
    await git(['clone', '-q', '-b', 'feature', withToken(w.fork.http_url_to_repo, w.bob.token), dir]);
    writeFileSync(join(dir, 'git.txt'), 'by git\n');
    await git(['add', 'git.txt'], dir);
    await git(['commit', '-q', '-m', 'By git'], dir);
    const sha = (await git(['rev-parse', 'HEAD'], dir)).trim();
    expect((await gitResult(['push', '-q', 'origin', 'feature'], dir)).code).toBe(0);
    expect(await headOf(w.fork.id, 'feature')).toBe(sha);
    // The merge request takes the new version.
    await eventually(async () => ((await api.get(mrs(w.upstream.id, `/${w.iid}`))).body.sha === sha ? true : undefined));

    // Another branch, or the push as a whole: Gitlab::Checks::PushCheck's refusal from the pre-receive hook.
    for (const target of ['solo', 'brand-new', 'master']) {
      const pushed = await gitResult(['push', '--force', 'origin', `HEAD:${target}`], dir);
      expect(pushed.code).toBe(1);
      expect(pushed.stderr).toContain(`! [remote rejected] HEAD -> ${target} (pre-receive hook declined)`);
      expect(pushed.stderr).toContain('remote: GitLab: You are not allowed to push code to this project.');
    }
    // Who may not merge into the target is refused before anything (no branch allows them).
    for (const token of [w.rita.token, w.eve.token]) {
      const advertised = await fetch(`${w.fork.http_url_to_repo}/info/refs?service=git-receive-pack`, { headers: basicAuth(token) });
      expect([advertised.status, await advertised.text()]).toEqual([403, 'You are not allowed to push code to this project.']);
    }
    expect((await fetch(`${w.fork.http_url_to_repo}/info/refs?service=git-receive-pack`, { headers: basicAuth(w.bob.token) })).status).toBe(200);
    // Merged or closed: no longer.
    expect((await api.put(mrs(w.upstream.id, `/${w.iid}`), { state_event: 'close' })).status).toBe(200);
    const closed = await fetch(`${w.fork.http_url_to_repo}/info/refs?service=git-receive-pack`, { headers: basicAuth(w.bob.token) });
    expect(closed.status).toBe(403);
  });

  it('lets them rebase the merge request in the fork (collaborative rebase)', async () => {
    const w = await world();
    expect((await commitVia(w.upstream.id, api.rootToken, 'master', 'upstream.txt')).status).toBe(201);
    const rebase = (token: string) => api.put(mrs(w.upstream.id, `/${w.iid}/rebase`), {}, { token });
    expect(await rebase(w.rita.token)).toMatchObject({ status: 403, body: { message: '403 Forbidden - Cannot push to source branch' } });
    const before = await headOf(w.fork.id, 'feature');
    expect(await rebase(w.bob.token)).toMatchObject({ status: 202, body: { rebase_in_progress: false } });
    const after = await headOf(w.fork.id, 'feature');
    expect(after).not.toBe(before);
    expect((await api.get(repo(w.fork.id, `/commits/${after}`))).body.parent_ids).toEqual([await headOf(w.upstream.id, 'master')]);
  });
});
