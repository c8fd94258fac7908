import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createProject, settled } from '../support/fixtures.js';
import { gitScratch, withToken } from '../support/git.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * `git push -o merge_request.create` to a fork (GitLab 12.10: PushOptionsHandlerService's
 * `target_project = project.default_merge_request_target`): the merge request is opened in the
 * upstream from the fork's branch, unless the upstream's merge requests are off or the fork is
 * more private than it.
 */

const { git, result: gitResult, newDir, remove } = gitScratch('forgelog-fork-push-options-');

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(async () => {
  await api.close();
  remove();
});

const mrs = (projectId: number, rest = '') => `/projects/${projectId}/merge_requests${rest}`;
const listOf = async (projectId: number, token = api.rootToken) => (await api.get(mrs(projectId), { query: { state: 'all' }, token })).body as any[];
const remoteText = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('remote:'))
    .map((l) => l.slice('remote:'.length).trim())
    .filter((l) => l !== '' && !/^=+$/.test(l))
    .join(' ');

/** An upstream of root's (README on master, then a `stable` branch the fork has not) and alice's fork of it, cloned as alice. */
async function forked(options: { visibility?: 'public' | 'private'; aliceRole?: number } = {}) {
  const upstream = await createProject(api, { visibility: options.visibility ?? 'public', initialize_with_readme: true });
  const alice = await api.createUser();
  if (options.aliceRole) await addMember(api, 'projects', upstream.id, alice.user.id, options.aliceRole);
  const forkRes = await api.post(`/projects/${upstream.id}/fork`, {}, { token: alice.token });
  expect(forkRes.status).toBe(201);
  expect((await api.post(`/projects/${upstream.id}/repository/branches`, { branch: 'stable', ref: 'master' })).status).toBe(201);
  const fork = forkRes.body as { id: number; http_url_to_repo: string; path_with_namespace: string };
  const dir = newDir();
  await git(['clone', '-q', withToken(fork.http_url_to_repo, alice.token), dir]);
  return { upstream, fork, alice, dir };
}
async function commitOn(dir: string, branch: string, path: string, message: string): Promise<string> {
  await git(['checkout', '-q', '-B', branch], dir);
  writeFileSync(join(dir, path), `${path}\n`);
  await git(['add', path], dir);
  await git(['commit', '-q', '-m', message], dir);
  return (await git(['rev-parse', 'HEAD'], dir)).trim();
}
const push = (dir: string, branch: string, ...options: string[]) => gitResult(['push', ...options.flatMap((o) => ['-o', o]), 'origin', branch], dir);

describe('git push -o merge_request.* to a fork', () => {
  it('opens the merge request in the upstream, from the fork, and updates it on the next push', async () => {
    const { upstream, fork, alice, dir } = await forked();
    const head = await commitOn(dir, 'feature', 'f.txt', 'Add the feature');
    const pushed = await push(dir, 'feature', 'merge_request.create');
    expect(pushed.code).toBe(0);
    expect(remoteText(pushed.stderr)).toBe('');
    const [opened, ...others] = await listOf(upstream.id);
    expect(others).toEqual([]);
    expect(opened).toMatchObject({
      iid: 1,
      project_id: upstream.id,
      source_project_id: fork.id,
      target_project_id: upstream.id,
      source_branch: 'feature',
      target_branch: 'master',
      title: 'Add the feature',
      sha: head,
      author: { id: alice.user.id },
      assignees: [{ id: alice.user.id }],
    });
    expect(await listOf(fork.id, alice.token)).toEqual([]);
    // The fork's commit is in the upstream's repository (the merge request fetched it).
    expect((await api.get(`/projects/${upstream.id}/repository/commits/${head}`)).status).toBe(200);

    // The next push finds it (the upstream's open merge request from the fork's branch) and updates it, as its author.
    await commitOn(dir, 'feature', 'g.txt', 'More');
    const again = await push(dir, 'feature', 'merge_request.title=Renamed', 'merge_request.target=stable');
    expect([again.code, remoteText(again.stderr)]).toEqual([0, '']);
    expect((await listOf(upstream.id)).map((m) => [m.iid, m.title, m.target_branch, m.source_project_id])).toEqual([[1, 'Renamed', 'stable', fork.id]]);

    // The target branch is looked for in the upstream: `stable` was found there (the fork has none), `nowhere` is not.
    await commitOn(dir, 'other', 'o.txt', 'Other');
    const missing = await push(dir, 'other', 'merge_request.create', 'merge_request.target=nowhere');
    expect(missing.code).toBe(0);
    expect(remoteText(missing.stderr)).toContain('Branch nowhere does not exist');
    expect(await listOf(upstream.id)).toHaveLength(1);

    // The upstream's default branch is left out (no merge request for master).
    await commitOn(dir, 'master', 'm.txt', 'On master');
    const master = await push(dir, 'master', 'merge_request.create');
    expect([master.code, remoteText(master.stderr)]).toEqual([0, '']);
    expect(await listOf(upstream.id)).toHaveLength(1);
    expect(await listOf(fork.id, alice.token)).toEqual([]);
  });

  it('opens it in the fork when the upstream has merge requests off, or the fork is more private', async () => {
    const off = await forked();
    expect((await api.put(`/projects/${off.upstream.id}`, { merge_requests_enabled: false })).status).toBe(200);
    await commitOn(off.dir, 'feature', 'f.txt', 'In the fork');
    expect((await push(off.dir, 'feature', 'merge_request.create')).code).toBe(0);
    expect((await listOf(off.fork.id, off.alice.token)).map((m) => [m.project_id, m.source_project_id, m.target_branch])).toEqual([[off.fork.id, off.fork.id, 'master']]);

    const hidden = await forked();
    expect((await api.put(`/projects/${hidden.fork.id}`, { visibility: 'private' }, { token: hidden.alice.token })).status).toBe(200);
    await commitOn(hidden.dir, 'feature', 'f.txt', 'Private work');
    expect((await push(hidden.dir, 'feature', 'merge_request.create')).code).toBe(0);
    expect(await listOf(hidden.upstream.id)).toEqual([]);
    expect((await listOf(hidden.fork.id, hidden.alice.token)).map((m) => [m.project_id, m.title])).toEqual([[hidden.fork.id, 'Private work']]);
  });

  it('needs create_merge_request_in on the upstream: a pusher who lost it is denied, the push stands', async () => {
    const { upstream, fork, alice, dir } = await forked({ visibility: 'private', aliceRole: 20 });
    expect((await api.del(`/projects/${upstream.id}/members/${alice.user.id}`)).status).toBe(204);
    const head = await commitOn(dir, 'feature', 'f.txt', 'Denied');
    const pushed = await push(dir, 'feature', 'merge_request.create');
    expect(pushed.code).toBe(0);
    expect(remoteText(pushed.stderr)).toContain('User access was denied');
    expect(await listOf(upstream.id)).toEqual([]);
    expect(await listOf(fork.id, alice.token)).toEqual([]);
    expect((await api.get(`/projects/${fork.id}/repository/branches/feature`, { token: alice.token })).body.commit.id).toBe(head);
  });
});
