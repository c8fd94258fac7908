import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, eventually, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Merge requests from a fork into its upstream (GitLab 12.10: MergeRequests::CreateService's
 * set_projects!, MergeRequest#validate_fork, fetch_source_branch!, RefreshService on the
 * fork's pushes, MergeService's source branch removal in the fork, RebaseService in the fork,
 * Projects::UnlinkForkService closing them).
 */

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const repo = (projectId: number, rest = '') => `/projects/${projectId}/repository${rest}`;
const mrs = (projectId: number, rest = '') => `/projects/${projectId}/merge_requests${rest}`;

async function commit(projectId: number, token: string, branch: string, path: string, content: string, extra: Record<string, unknown> = {}) {
  const res = await api.post(repo(projectId, '/commits'), { branch, commit_message: `write ${path}`, actions: [{ action: 'create', file_path: path, content }], ...extra }, { token });
  if (res.status !== 201) throw new Error(`commit: ${res.status} ${res.text}`);
  return res.body as { id: string };
}

/** A public upstream of root's with master (README.md, a.txt), and a fork of it in a new user's namespace. */
async function upstreamAndFork() {
  const upstream = await createProject(api, { visibility: 'public', initialize_with_readme: true });
  const wroteA = await commit(upstream.id, api.rootToken, 'master', 'a.txt', 'a\n');
  const alice = await api.createUser();
  const forked = await api.post(`/projects/${upstream.id}/fork`, {}, { token: alice.token });
  expect(forked.status).toBe(201);
  const fork = forked.body;
  return { upstream, fork, alice, wroteA };
}

const headOf = async (projectId: number, branch: string) => (await api.get(repo(projectId, `/branches/${branch}`), { token: api.rootToken })).body.commit?.id as string | undefined;

describe('opening a merge request from a fork', () => {
  it('targets the upstream named by target_project_id, fetches the source into it and shows its diff', async () => {
    const { upstream, fork, alice } = await upstreamAndFork();
    const head = await commit(fork.id, alice.token, 'feature', 'fork.txt', 'from the fork\n', { start_branch: 'master' });
    // The upstream does not hold the fork's commit before a merge request fetches it.
    expect((await api.get(repo(upstream.id, `/commits/${head.id}`))).status).toBe(404);

    const res = await api.post(mrs(fork.id), { title: 'From a fork', source_branch: 'feature', target_branch: 'master', target_project_id: upstream.id, allow_collaboration: true }, { token: alice.token });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      iid: 1,
      project_id: upstream.id,
      source_project_id: fork.id,
      target_project_id: upstream.id,
      sha: head.id,
      allow_collaboration: true,
      allow_maintainer_to_push: true,
      web_url: `${(upstream as unknown as { web_url: string }).web_url}/-/merge_requests/1`,
      references: { full: `${upstream.path_with_namespace}!1` },
    });
    // In the upstream's list, not the fork's; the upstream's repository now has the commit.
    expect(((await api.get(mrs(upstream.id))).body as any[]).map((m) => m.id)).toEqual([res.body.id]);
    expect((await api.get(mrs(fork.id), { token: alice.token })).body).toEqual([]);
    expect((await api.get(repo(upstream.id, `/commits/${head.id}`))).body).toMatchObject({ id: head.id, title: 'write fork.txt' });
    const changes = await api.get(mrs(upstream.id, '/1/changes'));
    expect(changes.body.changes.map((c: any) => [c.new_path, c.new_file])).toEqual([['fork.txt', true]]);
    expect(((await api.get(mrs(upstream.id, '/1/commits'))).body as any[]).map((c) => c.id)).toEqual([head.id]);
    const merged = await eventually(async () => {
      const mr = (await api.get(mrs(upstream.id, '/1'))).body;
      return mr.merge_status === 'can_be_merged' ? mr : undefined;
    });
    expect(merged.diff_refs).toEqual({ base_sha: await headOf(upstream.id, 'master'), head_sha: head.id, start_sha: await headOf(upstream.id, 'master') });

    // The same branch name on both sides is no conflict across projects.
    await commit(fork.id, alice.token, 'master', 'm.txt', 'm\n');
    const sameName = await api.post(mrs(fork.id), { title: 'Master of the fork', source_branch: 'master', target_branch: 'master', target_project_id: upstream.id }, { token: alice.token });
    expect(sameName.status).toBe(201);
    expect(sameName.body).toMatchObject({ iid: 2, project_id: upstream.id, source_project_id: fork.id, source_branch: 'master', target_branch: 'master' });
    const duplicate = await api.post(mrs(fork.id), { title: 'Again', source_branch: 'feature', target_branch: 'master', target_project_id: upstream.id }, { token: alice.token });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body).toEqual({ message: ['Another open merge request already exists for this source branch: !1'] });
    // Without target_project_id the target is the project of the path (CreateService, not the web form's default): the fork.
    const inFork = await api.post(mrs(fork.id), { title: 'Within', source_branch: 'feature', target_branch: 'master' }, { token: alice.token });
    expect(inFork.status).toBe(201);
    expect(inFork.body).toMatchObject({ project_id: fork.id, source_project_id: fork.id });
    expect(inFork.body).not.toHaveProperty('allow_collaboration');
    expect((await api.post(mrs(fork.id), { title: 'Self', source_branch: 'master', target_branch: 'master', target_project_id: fork.id }, { token: alice.token })).body).toEqual({
      message: ["You can't use same project/branch for source and target"],
    });
  });

  it('refuses a target outside the fork network (422), one the caller may not see (404) or not open merge requests in (403)', async () => {
    const { upstream, fork, alice } = await upstreamAndFork();
    await commit(fork.id, alice.token, 'feature', 'f.txt', 'f\n', { start_branch: 'master' });
    const stranger = await createProject(api, { visibility: 'public', initialize_with_readme: true });
    const refused = await api.post(mrs(fork.id), { title: 'Elsewhere', source_branch: 'feature', target_branch: 'master', target_project_id: stranger.id }, { token: alice.token });
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({ message: ['Source project is not a fork of the target project'] });
    // A fork of the fork is of the same network: its merge requests may target the root.
    const bob = await api.createUser();
    const grandchild = (await api.post(`/projects/${fork.id}/fork`, {}, { token: bob.token })).body;
    await commit(grandchild.id, bob.token, 'deep', 'deep.txt', 'deep\n', { start_branch: 'master' });
    const deep = await api.post(mrs(grandchild.id), { title: 'Deep', source_branch: 'deep', target_branch: 'master', target_project_id: upstream.id }, { token: bob.token });
    expect(deep.status).toBe(201);
    expect(deep.body).toMatchObject({ project_id: upstream.id, source_project_id: grandchild.id });
    // A sibling of the network (another fork of the upstream) is a target too.
    const sibling = (await api.post(`/projects/${upstream.id}/fork`, { path: 'sibling', name: 'sibling' }, { token: bob.token })).body;
    expect((await api.post(mrs(fork.id), { title: 'Sideways', source_branch: 'feature', target_branch: 'master', target_project_id: sibling.id }, { token: alice.token })).body).toMatchObject({
      project_id: sibling.id,
      source_project_id: fork.id,
    });

    const hidden = await createProject(api, { visibility: 'private' });
    for (const id of [hidden.id, 99999999]) {
      const res = await api.post(mrs(fork.id), { title: 'Hidden', source_branch: 'feature', target_branch: 'master', target_project_id: id }, { token: alice.token });
      expect([res.status, res.body]).toEqual([404, { message: '404 Not found' }]);
    }
    // Merge requests of the upstream for members only: alice sees the project but may not open one there.
    expect((await api.put(`/projects/${upstream.id}`, { merge_requests_access_level: 'private' })).status).toBe(200);
    const closedToHer = await api.post(mrs(fork.id), { title: 'Members only', source_branch: 'feature', target_branch: 'master', target_project_id: upstream.id }, { token: alice.token });
    expect([closedToHer.status, closedToHer.body]).toEqual([403, { message: '403 Forbidden' }]);
  });
});

describe('a fork merge request over its life', () => {
  it('takes a new version on a push to the fork, is rebased in the fork, merged into the upstream with the source branch removed in the fork', async () => {
    const { upstream, fork, alice } = await upstreamAndFork();
    await commit(fork.id, alice.token, 'feature', 'one.txt', '1\n', { start_branch: 'master' });
    const mr = (await api.post(mrs(fork.id), { title: 'Life', source_branch: 'feature', target_branch: 'master', target_project_id: upstream.id, remove_source_branch: true }, { token: alice.token })).body;
    expect(mr.project_id).toBe(upstream.id);

    // A push to the fork's branch: a new version in the upstream's merge request (RefreshService).
    const second = await commit(fork.id, alice.token, 'feature', 'two.txt', '2\n');
    const refreshed = await eventually(async () => {
      const body = (await api.get(mrs(upstream.id, `/${mr.iid}`))).body;
      return body.sha === second.id ? body : undefined;
    });
    expect(refreshed.sha).toBe(second.id);
    expect(((await api.get(mrs(upstream.id, `/${mr.iid}/versions`))).body as any[]).map((v) => v.head_commit_sha)).toEqual([second.id, mr.sha]);
    // A push to the upstream's branch of the same name is not the merge request's source.
    await commit(upstream.id, api.rootToken, 'feature', 'up.txt', 'up\n', { start_branch: 'master' });

    // The upstream moves on; the author rebases in her fork (she may push there; root may not be asked to).
    const upstreamHead = await commit(upstream.id, api.rootToken, 'master', 'later.txt', 'later\n');
    const outsider = await api.createUser();
    expect((await api.put(mrs(upstream.id, `/${mr.iid}/rebase`), {}, { token: outsider.token })).body).toEqual({ message: '403 Forbidden - Cannot push to source branch' });
    const rebased = await api.put(mrs(upstream.id, `/${mr.iid}/rebase`), {}, { token: alice.token });
    expect(rebased.status).toBe(202);
    const forkHead = (await headOf(fork.id, 'feature'))!;
    expect(forkHead).not.toBe(second.id);
    const rebasedCommit = (await api.get(repo(fork.id, `/commits/${forkHead}`), { token: alice.token })).body;
    expect(rebasedCommit.title).toBe('write two.txt');
    const parent = (await api.get(repo(fork.id, `/commits/${rebasedCommit.parent_ids[0]}`), { token: alice.token })).body;
    expect(parent.parent_ids).toEqual([upstreamHead.id]);
    await eventually(async () => ((await api.get(mrs(upstream.id, `/${mr.iid}`))).body.sha === forkHead ? true : undefined));

    // The author is no member of the upstream: she may not merge. Root merges; the source branch goes from the fork.
    expect((await api.put(mrs(upstream.id, `/${mr.iid}/merge`), {}, { token: alice.token })).status).toBe(401);
    await eventually(async () => ((await api.get(mrs(upstream.id, `/${mr.iid}`))).body.merge_status === 'can_be_merged' ? true : undefined));
    const merged = await api.put(mrs(upstream.id, `/${mr.iid}/merge`), { sha: forkHead });
    expect(merged.status).toBe(200);
    expect(merged.body).toMatchObject({ state: 'merged', merge_commit_sha: expect.any(String) });
    const mergeCommit = (await api.get(repo(upstream.id, `/commits/${merged.body.merge_commit_sha}`))).body;
    expect(mergeCommit.parent_ids).toEqual([upstreamHead.id, forkHead]);
    expect(await headOf(upstream.id, 'master')).toBe(merged.body.merge_commit_sha);
    expect(await headOf(fork.id, 'feature')).toBeUndefined();
    const forkEvents = (await api.repositoryEvents(fork.id)).map((e) => e.type);
    expect(forkEvents.at(-1)).toBe('BranchDeleted');

    // Without removal the fork's branch stays, and the fork's repository gets no event.
    const kept = await commit(fork.id, alice.token, 'kept', 'kept.txt', 'kept\n', { start_branch: 'master' });
    const another = (await api.post(mrs(fork.id), { title: 'Kept', source_branch: 'kept', target_branch: 'master', target_project_id: upstream.id }, { token: alice.token })).body;
    await eventually(async () => ((await api.get(mrs(upstream.id, `/${another.iid}`))).body.merge_status === 'can_be_merged' ? true : undefined));
    const forkEventCount = (await api.repositoryEvents(fork.id)).length;
    expect((await api.put(mrs(upstream.id, `/${another.iid}/merge`), { should_remove_source_branch: false })).body).toMatchObject({ state: 'merged' });
    expect(await headOf(fork.id, 'kept')).toBe(kept.id);
    expect((await api.repositoryEvents(fork.id)).length).toBe(forkEventCount);
  });

  it('is closed when its source branch is deleted in the fork, and when the fork leaves the network', async () => {
    const { upstream, fork, alice } = await upstreamAndFork();
    await commit(fork.id, alice.token, 'gone', 'g.txt', 'g\n', { start_branch: 'master' });
    await commit(fork.id, alice.token, 'kept', 'k.txt', 'k\n', { start_branch: 'master' });
    const toUpstream = { target_branch: 'master', target_project_id: upstream.id };
    const gone = (await api.post(mrs(fork.id), { title: 'Gone', source_branch: 'gone', ...toUpstream }, { token: alice.token })).body;
    const kept = (await api.post(mrs(fork.id), { title: 'Kept', source_branch: 'kept', ...toUpstream }, { token: alice.token })).body;
    const own = (await api.post(mrs(fork.id), { title: 'Own', source_branch: 'kept', target_branch: 'master' }, { token: alice.token })).body;
    // A branch of the same name deleted in the upstream closes nothing of the fork's.
    await commit(upstream.id, api.rootToken, 'gone', 'x.txt', 'x\n', { start_branch: 'master' });
    expect((await api.del(repo(upstream.id, '/branches/gone'))).status).toBe(204);
    expect((await api.del(repo(fork.id, '/branches/gone'), { token: alice.token })).status).toBe(204);
    await eventually(async () => ((await api.get(mrs(upstream.id, `/${gone.iid}`))).body.state === 'closed' ? true : undefined));
    expect((await api.get(mrs(upstream.id, `/${kept.iid}`))).body.state).toBe('opened');

    expect((await api.del(`/projects/${fork.id}/fork`, { token: alice.token })).status).toBe(204);
    const closed = await eventually(async () => {
      const body = (await api.get(mrs(upstream.id, `/${kept.iid}`))).body;
      return body.state === 'closed' ? body : undefined;
    });
    expect(closed.closed_by).toMatchObject({ id: alice.user.id });
    // The fork's own merge request stays open.
    expect((await api.get(mrs(fork.id, `/${own.iid}`), { token: alice.token })).body.state).toBe('opened');
  });
});

describe("a fork's repository", () => {
  it('answers last_commit_id and the path-filtered history as its source does', async () => {
    const { upstream, fork, alice, wroteA } = await upstreamAndFork();
    const fromUpstream = (await api.get(repo(upstream.id, '/files/a.txt'), { query: { ref: 'master' } })).body;
    const fromFork = (await api.get(repo(fork.id, '/files/a.txt'), { query: { ref: 'master' }, token: alice.token })).body;
    expect(fromUpstream.last_commit_id).toBe(wroteA.id);
    expect(fromFork.last_commit_id).toBe(wroteA.id);
    const history = async (projectId: number) => ((await api.get(repo(projectId, '/commits'), { query: { path: 'a.txt' }, token: alice.token })).body as any[]).map((c) => c.id);
    expect(await history(upstream.id)).toEqual([wroteA.id]);
    expect(await history(fork.id)).toEqual([wroteA.id]);
  });
});
