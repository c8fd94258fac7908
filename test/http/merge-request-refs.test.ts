import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createProject, eventually, settled } from '../support/fixtures.js';
import { basicAuth, gitScratch, withToken } from '../support/git.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * `refs/merge-requests/:iid/head` and `/merge` for git clients (GitLab 12.10:
 * MergeRequest#fetch_ref! on every new version, MergeToRefService's merge ref): advertised by
 * upload-pack (v0 and v2 `ls-refs`) and the dumb protocol from the merge requests projection,
 * fetched with the real git, and refused to a push.
 */

const { git, result: gitResult, newDir, remove } = gitScratch('forgelog-mr-refs-');

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

async function commit(projectId: number, token: string, branch: string, path: string, content: string, extra: Record<string, unknown> = {}) {
  const res = await api.post(repo(projectId, '/commits'), { branch, commit_message: `write ${path}`, actions: [{ action: 'create', file_path: path, content }], ...extra }, { token });
  if (res.status !== 201) throw new Error(`commit: ${res.status} ${res.text}`);
  return (res.body as { id: string }).id;
}

/** `git ls-remote` as a map of ref → SHA (with `-c protocol.version=…`). */
async function lsRemote(url: string, version: 0 | 2, env: Record<string, string> = {}): Promise<Map<string, string>> {
  const out = await git(['-c', `protocol.version=${version}`, 'ls-remote', url], undefined, env);
  return new Map(
    out
      .trim()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const [sha, ref] = line.split('\t');
        return [ref!, sha!];
      }),
  );
}
const mergeRequestRefsOf = (refs: Map<string, string>) => [...refs].filter(([ref]) => ref.startsWith('refs/merge-requests/'));

/**
 * A public upstream (root's) with a merge request from a fork (alice's, iid 1) and one of its
 * own (iid 2, whose merge ref GET …/merge_ref wrote).
 */
async function world() {
  const upstream = await createProject(api, { visibility: 'public', initialize_with_readme: true });
  const alice = await api.createUser();
  const fork = (await api.post(`/projects/${upstream.id}/fork`, {}, { token: alice.token })).body;
  const forkHead = await commit(fork.id, alice.token, 'feature', 'fork.txt', 'fork\n', { start_branch: 'master' });
  expect((await api.post(mrs(fork.id), { title: 'From the fork', source_branch: 'feature', target_branch: 'master', target_project_id: upstream.id }, { token: alice.token })).status).toBe(201);
  const ownHead = await commit(upstream.id, api.rootToken, 'topic', 'own.txt', 'own\n', { start_branch: 'master' });
  expect((await api.post(mrs(upstream.id), { title: 'Own', source_branch: 'topic', target_branch: 'master' })).status).toBe(201);
  await eventually(async () => ((await api.get(mrs(upstream.id, '/2'))).body.merge_status === 'can_be_merged' ? true : undefined));
  const mergeRef = await api.get(mrs(upstream.id, '/2/merge_ref'));
  expect(mergeRef.status).toBe(200);
  const details = (await api.get(`/projects/${upstream.id}`)).body as { http_url_to_repo: string };
  return { upstream, url: details.http_url_to_repo, fork, alice, forkHead, ownHead, mergeSha: mergeRef.body.commit_id as string };
}

describe('refs/merge-requests/:iid/head and /merge', () => {
  it('are advertised by upload-pack (v0, v2 ls-refs) and the dumb protocol, from the projection', async () => {
    const w = await world();
    const expected = [
      ['refs/merge-requests/1/head', w.forkHead],
      ['refs/merge-requests/2/head', w.ownHead],
      ['refs/merge-requests/2/merge', w.mergeSha],
    ];
    const v2 = await lsRemote(w.url, 2);
    expect(mergeRequestRefsOf(v2)).toEqual(expected);
    // Between the branches and the tags, by name.
    expect([...v2.keys()]).toEqual(['HEAD', 'refs/heads/master', 'refs/heads/topic', ...expected.map(([ref]) => ref)]);
    expect(mergeRequestRefsOf(await lsRemote(w.url, 0))).toEqual(expected);
    expect(mergeRequestRefsOf(await lsRemote(w.url, 0, { GIT_SMART_HTTP: '0' }))).toEqual(expected);
    // The merge ref's commit has the target's head and the merge request's head as parents.
    const merged = await api.get(repo(w.upstream.id, `/commits/${w.mergeSha}`));
    expect(merged.body.parent_ids).toEqual([(await api.get(repo(w.upstream.id, '/branches/master'))).body.commit.id, w.ownHead]);
    // receive-pack does not list them (they are refused to a push).
    const advertised = await fetch(`${w.url}/info/refs?service=git-receive-pack`, { headers: basicAuth(api.rootToken) });
    expect(advertised.status).toBe(200);
    expect(Buffer.from(await advertised.arrayBuffer()).toString('latin1')).not.toContain('refs/merge-requests/');
  });

  it('are fetched by git: one by its short name, all by a refspec, over v2, v0 and the dumb protocol', async () => {
    const w = await world();
    for (const [version, env] of [
      ['2', {}],
      ['0', {}],
      ['0', { GIT_SMART_HTTP: '0' }],
    ] as const) {
      const dir = newDir();
      await git(['init', '-q', dir]);
      await git(['remote', 'add', 'origin', w.url], dir);
      // The fork's commit, fetched from the upstream (MergeRequest#fetch_ref! copied it there).
      await git(['-c', `protocol.version=${version}`, 'fetch', '-q', 'origin', 'merge-requests/1/head'], dir, env);
      expect((await git(['rev-parse', 'FETCH_HEAD'], dir)).trim()).toBe(w.forkHead);
      expect(await git(['show', 'FETCH_HEAD:fork.txt'], dir)).toBe('fork\n');
      await git(['-c', `protocol.version=${version}`, 'fetch', '-q', 'origin', '+refs/merge-requests/*:refs/remotes/origin/merge-requests/*'], dir, env);
      const fetched = await git(['for-each-ref', '--format=%(refname) %(objectname)', 'refs/remotes/origin/merge-requests/'], dir);
      expect(fetched.trim().split('\n')).toEqual([
        `refs/remotes/origin/merge-requests/1/head ${w.forkHead}`,
        `refs/remotes/origin/merge-requests/2/head ${w.ownHead}`,
        `refs/remotes/origin/merge-requests/2/merge ${w.mergeSha}`,
      ]);
      // The merge ref's tree holds both sides.
      expect((await git(['ls-tree', '--name-only', 'refs/remotes/origin/merge-requests/2/merge'], dir)).trim().split('\n')).toEqual(['README.md', 'own.txt']);
    }
  });

  it('follows the merge request: a new version moves the head ref, and a closed one keeps it', async () => {
    const w = await world();
    const next = await commit(w.fork.id, w.alice.token, 'feature', 'more.txt', 'more\n');
    const moved = await eventually(async () => {
      const refs = await lsRemote(w.url, 2);
      return refs.get('refs/merge-requests/1/head') === next ? refs : undefined;
    });
    expect(moved.get('refs/merge-requests/2/head')).toBe(w.ownHead);
    expect((await api.put(mrs(w.upstream.id, '/1'), { state_event: 'close' })).status).toBe(200);
    expect((await lsRemote(w.url, 2)).get('refs/merge-requests/1/head')).toBe(next);
    // A fetch of the new head finds its objects in the upstream.
    const dir = newDir();
    await git(['init', '-q', dir]);
    await git(['fetch', '-q', w.url, 'refs/merge-requests/1/head'], dir);
    expect(await git(['show', 'FETCH_HEAD:more.txt'], dir)).toBe('more\n');
  });

  it('are refused to a push, whoever pushes', async () => {
    const w = await world();
    const dir = newDir();
    await git(['clone', '-q', withToken(w.url, api.rootToken), dir]);
    writeFileSync(join(dir, 'x.txt'), 'x\n');
    await git(['add', 'x.txt'], dir);
    await git(['commit', '-q', '-m', 'X'], dir);
    for (const ref of ['refs/merge-requests/1/head', 'refs/merge-requests/2/merge', 'refs/merge-requests/3/head']) {
      const pushed = await gitResult(['push', 'origin', `HEAD:${ref}`], dir);
      expect(pushed.code).toBe(1);
      expect(pushed.stderr).toContain(`! [remote rejected] HEAD -> ${ref} (deny updating a hidden ref)`);
    }
    // Not advertised to receive-pack, a deletion names no old value: refused all the same.
    const deleted = await gitResult(['push', 'origin', ':refs/merge-requests/1/head'], dir);
    expect(deleted.code).toBe(1);
    expect(deleted.stderr).toContain('! [remote rejected] refs/merge-requests/1/head');
    expect(mergeRequestRefsOf(await lsRemote(w.url, 2))).toEqual([
      ['refs/merge-requests/1/head', w.forkHead],
      ['refs/merge-requests/2/head', w.ownHead],
      ['refs/merge-requests/2/merge', w.mergeSha],
    ]);
  });

  it('are read as the repository is: download_code', async () => {
    const project = await createProject(api, { visibility: 'private', initialize_with_readme: true });
    const head = await commit(project.id, api.rootToken, 'topic', 't.txt', 't\n', { start_branch: 'master' });
    expect((await api.post(mrs(project.id), { title: 'T', source_branch: 'topic', target_branch: 'master' })).status).toBe(201);
    const url = ((await api.get(`/projects/${project.id}`)).body as { http_url_to_repo: string }).http_url_to_repo;
    const guest = await api.createUser();
    const reporter = await api.createUser();
    const stranger = await api.createUser();
    await addMember(api, 'projects', project.id, guest.user.id, 10);
    await addMember(api, 'projects', project.id, reporter.user.id, 20);
    const infoRefs = (token?: string) => fetch(`${url}/info/refs?service=git-upload-pack`, { headers: token ? basicAuth(token) : {} });
    expect((await infoRefs()).status).toBe(401);
    expect((await infoRefs(stranger.token)).status).toBe(404);
    expect((await infoRefs(guest.token)).status).toBe(403);
    for (const token of [reporter.token, api.rootToken]) {
      expect(mergeRequestRefsOf(await lsRemote(withToken(url, token), 2))).toEqual([['refs/merge-requests/1/head', head]]);
    }
  });
});
