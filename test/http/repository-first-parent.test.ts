import { spawnSync } from 'node:child_process';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfill } from '../../migrations/0076_first_parent_depth.js';
import { createProject, settled } from '../support/fixtures.js';
import { gitScratch, withToken } from '../support/git.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The commit list's `first_parent` (GitLab 12.10 lib/api/commits.rb: `git log --first-parent`,
 * X-Total `git rev-list --count --first-parent`) against git itself, on a history of branches,
 * merges each way (a branch merged into master and master into a branch) and octopuses made by
 * `git fast-import` and pushed with `git push`: pages, X-Total, X-Total-Pages, and with
 * `since`/`until`, `path`, `all`, `with_stats`; the first-parent depth of the commit graph
 * index (migration 0076: its backfill, its NOT NULL) and of a fork's copied rows.
 */

const { git, newDir, remove, env } = gitScratch('forgelog-first-parent-');

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(async () => {
  await api.close();
  remove();
});

const lines = (text: string) => text.split('\n').filter((line) => line !== '');
const BASE = 1_600_000_000;

/** A fast-import stream: committer times rise by a minute a commit; files under own/<branch>/ and shared/. */
function history(commits: number): { stream: string; branches: string[] } {
  let seed = 11;
  const random = (n: number) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) % n;
  };
  const states = new Map<string, Map<string, number>>([['master', new Map()]]);
  const out: string[] = [];
  const marks = new Map<string, number>();
  let mark = 0;
  const emit = (branch: string, changes: Map<string, number>, parents: string[], step: number) => {
    out.push(`commit refs/heads/${branch}`, `mark :${++mark}`, `committer Gen <gen@example.com> ${BASE + step * 60} +0000`);
    const message = `step ${step} on ${branch}`;
    out.push(`data ${Buffer.byteLength(message)}`, message);
    const [from, ...merges] = parents;
    if (from !== undefined) out.push(`from :${marks.get(from)}`);
    for (const other of merges) out.push(`merge :${marks.get(other)}`);
    for (const [path, version] of changes) {
      const content = `${path} version ${version}\n${'line\n'.repeat(version % 5)}`;
      out.push(`M 100644 inline ${path}`, `data ${Buffer.byteLength(content)}`, content);
    }
    out.push('');
    marks.set(branch, mark);
  };
  let version = 0;
  const files = (branch: string) => [`own/${branch}/a.txt`, `own/${branch}/b.txt`, 'shared/c.txt', 'shared/d/e.txt'];
  const first = new Map(files('master').map((path) => [path, ++version]));
  emit('master', first, [], 0);
  states.set('master', new Map(first));
  for (let step = 1; step < commits; step++) {
    const names = [...states.keys()];
    const op = random(10);
    if (op === 0 && states.size < 6) {
      const from = names[random(names.length)]!;
      const branch = `b${step}`;
      const made = new Map([[files(branch)[0]!, ++version]]);
      states.set(branch, new Map([...states.get(from)!, ...made]));
      emit(branch, made, [from], step);
    } else if (op <= 3 && names.length > 1) {
      const target = names[random(names.length)]!;
      const sources = [...new Set([names[random(names.length)]!, ...(op === 1 ? [names[random(names.length)]!] : [])])].filter((name) => name !== target);
      if (sources.length === 0) continue;
      const merged = new Map(states.get(target)!);
      const changes = new Map<string, number>();
      for (const source of sources) {
        for (const [path, v] of states.get(source)!) {
          if ((merged.get(path) ?? 0) >= v) continue;
          merged.set(path, v);
          changes.set(path, v);
        }
      }
      states.set(target, merged);
      emit(target, changes, [target, ...sources], step);
    } else {
      const branch = names[random(names.length)]!;
      const changes = new Map<string, number>();
      for (const path of files(branch)) if (random(3) === 0) changes.set(path, ++version);
      if (changes.size === 0) changes.set(files(branch)[1]!, ++version);
      for (const [path, v] of changes) states.get(branch)!.set(path, v);
      emit(branch, changes, [branch], step);
    }
  }
  return { stream: `${out.join('\n')}\n`, branches: [...states.keys()] };
}

const ids = (body: { id: string }[]) => body.map((commit) => commit.id);

describe('GET /projects/:id/repository/commits?first_parent=true', () => {
  it('lists and counts as git log --first-parent and git rev-list --count --first-parent do, with pages, since/until, path, all and with_stats', async () => {
    const project = await createProject(api);
    const { http_url_to_repo: url } = (await api.get(`/projects/${project.id}`)).body as { http_url_to_repo: string };
    const dir = newDir();
    await git(['init', '-q', '--bare', dir]);
    const { stream, branches } = history(160);
    const imported = spawnSync('/usr/bin/git', ['fast-import', '--quiet'], { cwd: dir, env, input: stream });
    expect(imported.stderr.toString()).toBe('');
    expect(imported.status).toBe(0);
    expect(branches.length).toBeGreaterThanOrEqual(4);
    expect(Number((await git(['rev-list', '--count', '--merges', '--all'], dir)).trim())).toBeGreaterThan(15);
    await git(['push', '-q', withToken(url, api.rootToken), '--all'], dir);
    expect((await api.put(`/projects/${project.id}`, { default_branch: 'master' })).status).toBe(200);
    const list = (query: Record<string, string | number | boolean>) => api.get(`/projects/${project.id}/repository/commits`, { query: { first_parent: true, ...query } });

    let differs = 0;
    for (const branch of branches) {
      const head = (await git(['rev-parse', branch], dir)).trim();
      const expected = lines(await git(['log', '--first-parent', '--format=%H', head], dir));
      expect(String(expected.length)).toBe((await git(['rev-list', '--count', '--first-parent', head], dir)).trim());
      if (expected.length < Number((await git(['rev-list', '--count', head], dir)).trim())) differs++;
      // Pages of 7, as many as the log has, and one past its end.
      const pages = Math.ceil(expected.length / 7);
      for (const page of [1, 2, Math.max(1, pages - 1), pages, pages + 1]) {
        const res = await list({ ref_name: branch, per_page: 7, page });
        expect(res.status).toBe(200);
        expect([branch, page, ids(res.body)]).toEqual([branch, page, expected.slice((page - 1) * 7, page * 7)]);
        expect([res.headers.get('x-total'), res.headers.get('x-total-pages')]).toEqual([String(expected.length), String(pages)]);
      }
      // Without first_parent: the whole history, as before.
      const plain = await api.get(`/projects/${project.id}/repository/commits`, { query: { ref_name: branch, per_page: 100 } });
      expect(ids(plain.body)).toEqual(lines(await git(['log', '--format=%H', '-100', head], dir)));

      // since / until (inclusive, on the committer date).
      const since = BASE + 40 * 60;
      const until = BASE + 120 * 60;
      const dated = lines(await git(['log', '--first-parent', '--format=%H', `--since=@${since}`, `--until=@${until}`, head], dir));
      const res = await list({ ref_name: branch, since: new Date(since * 1000).toISOString(), until: new Date(until * 1000).toISOString(), per_page: 5 });
      expect([branch, ids(res.body), res.headers.get('x-total')]).toEqual([branch, dated.slice(0, 5), String(dated.length)]);

      // path: files, a directory, a path no commit touched; with since.
      for (const path of ['shared/c.txt', 'shared/d', `own/${branch}/a.txt`, 'own/master/b.txt', 'nowhere']) {
        const changed = lines(await git(['log', '--first-parent', '--format=%H', head, '--', path], dir));
        const byPath = await list({ ref_name: branch, path, per_page: 100 });
        expect([branch, path, ids(byPath.body), byPath.headers.get('x-total')]).toEqual([branch, path, changed, String(changed.length)]);
        const second = await list({ ref_name: branch, path, per_page: 3, page: 2 });
        expect([branch, path, ids(second.body)]).toEqual([branch, path, changed.slice(3, 6)]);
        const recent = lines(await git(['log', '--first-parent', '--format=%H', `--since=@${since}`, head, '--', path], dir));
        const byPathSince = await list({ ref_name: branch, path, since: new Date(since * 1000).toISOString(), per_page: 100 });
        expect([branch, path, ids(byPathSince.body), byPathSince.headers.get('x-total')]).toEqual([branch, path, recent, String(recent.length)]);
      }
    }
    // The history is one where first_parent matters.
    expect(differs).toBeGreaterThanOrEqual(2);
    const master = lines(await git(['log', '--first-parent', '--format=%H', 'master'], dir));
    expect(ids((await api.get(`/projects/${project.id}/repository/commits`, { query: { per_page: 100 } })).body)).not.toEqual(master.slice(0, 100));
    // A path whose first-parent log is not its log: merges that took it from a side are shown (against the first parent), the side's own commits are not.
    const fpPath = lines(await git(['log', '--first-parent', '--format=%H', 'master', '--', 'shared/c.txt'], dir));
    const fullPath = lines(await git(['log', '--format=%H', 'master', '--', 'shared/c.txt'], dir));
    expect(fpPath.filter((sha) => !fullPath.includes(sha)).length).toBeGreaterThan(0);
    expect(fullPath.filter((sha) => !fpPath.includes(sha)).length).toBeGreaterThan(0);

    // all: every branch's first-parent chain, date order, each commit once; each page oldest first (GitLab's --reverse).
    // A branch merged into another is deleted first, so that some commits are reached only through a second parent.
    let deleted: string | undefined;
    for (const branch of branches.filter((name) => name !== 'master')) {
      const head = (await git(['rev-parse', branch], dir)).trim();
      await git(['update-ref', '-d', `refs/heads/${branch}`], dir);
      if (Number((await git(['rev-list', '--count', '--all', '--first-parent'], dir)).trim()) < Number((await git(['rev-list', '--count', '--all'], dir)).trim())) {
        await git(['push', '-q', withToken(url, api.rootToken), '--delete', branch], dir);
        deleted = branch;
        break;
      }
      await git(['update-ref', `refs/heads/${branch}`, head], dir);
    }
    expect(deleted).toBeDefined();
    const everything = lines(await git(['log', '--all', '--first-parent', '--format=%H'], dir));
    expect(String(everything.length)).toBe((await git(['rev-list', '--count', '--all', '--first-parent'], dir)).trim());
    expect(everything.length).toBeLessThan(Number((await git(['rev-list', '--count', '--all'], dir)).trim()));
    for (const page of [1, 2, 5]) {
      const res = await list({ all: true, per_page: 10, page });
      expect([page, ids(res.body)]).toEqual([page, everything.slice((page - 1) * 10, page * 10).reverse()]);
      expect([res.headers.get('x-total'), res.headers.get('x-total-pages')]).toEqual([String(everything.length), String(Math.ceil(everything.length / 10))]);
    }
    const allPath = lines(await git(['log', '--all', '--first-parent', '--format=%H', '--', 'shared/c.txt'], dir));
    const allByPath = await list({ all: true, path: 'shared/c.txt', per_page: 100 });
    expect([ids(allByPath.body), allByPath.headers.get('x-total')]).toEqual([allPath.slice().reverse(), String(allPath.length)]);

    // with_stats: each commit's stats against its first parent (git diff --numstat).
    const stats = await list({ with_stats: true, per_page: 12 });
    expect(ids(stats.body)).toEqual(master.slice(0, 12));
    for (const commit of stats.body as { id: string; parent_ids: string[]; stats: { additions: number; deletions: number; total: number } }[]) {
      const numstat = lines(await git(['diff', '--numstat', `${commit.id}^1`, commit.id], dir)).map((row) => row.split('\t').map(Number));
      const additions = numstat.reduce((sum, [a]) => sum + a!, 0);
      const deletions = numstat.reduce((sum, [, d]) => sum + d!, 0);
      expect([commit.id, commit.stats]).toEqual([commit.id, { additions, deletions, total: additions + deletions }]);
    }

    // A bad value is refused as the other booleans are.
    expect((await list({ first_parent: 'maybe' })).status).toBe(400);

    // The index: each row's depth is git's count; the migration's backfill gives the same rows; a row without one is refused.
    const db = api.handle.db;
    const rows = async () => (await db.selectFrom('repository_commits').select(['sha', 'first_parent_depth']).where('project_id', '=', project.id).orderBy('sha').execute()).map((r) => [r.sha, r.first_parent_depth]);
    const indexed = await rows();
    for (const branch of branches.filter((name) => name !== deleted)) {
      const head = (await git(['rev-parse', branch], dir)).trim();
      expect(indexed.find(([sha]) => sha === head)![1]).toBe(Number((await git(['rev-list', '--count', '--first-parent', head], dir)).trim()));
    }
    await db.transaction().execute(async (trx) => {
      await sql.raw('alter table repository_commits alter column first_parent_depth drop not null').execute(trx);
      await sql.raw('alter table repository_commits disable trigger repository_commits_no_update').execute(trx);
      await sql`update repository_commits set first_parent_depth = null where project_id = ${project.id}`.execute(trx);
      await backfill(trx, project.id);
      await sql.raw('alter table repository_commits enable trigger repository_commits_no_update').execute(trx);
      await sql.raw('alter table repository_commits alter column first_parent_depth set not null').execute(trx);
    });
    expect(await rows()).toEqual(indexed);
    await expect(sql`insert into repository_commits (project_id, sha, parents, generation, committer_time, ancestors) values (${project.id}, ${'f'.repeat(40)}, '{}', 1, 0, 1)`.execute(db)).rejects.toThrow(/first_parent_depth/);

    // A fork's rows are copied with their depth: the fork lists and counts the same.
    const fork = await api.post(`/projects/${project.id}/fork`, { path: `${project.path}-fork`, name: `${project.name} fork` });
    expect(fork.status).toBe(201);
    await settled(api);
    const forked = await api.get(`/projects/${fork.body.id}/repository/commits`, { query: { first_parent: true, per_page: 100 } });
    expect([ids(forked.body), forked.headers.get('x-total')]).toEqual([master.slice(0, 100), String(master.length)]);
  }, 180_000);

  it('answers as the list does for who may read the repository', async () => {
    const secret = await createProject(api);
    await api.post(`/projects/${secret.id}/repository/commits`, { branch: 'master', commit_message: 'One', actions: [{ action: 'create', file_path: 'a.txt', content: 'a\n' }] });
    const open = await createProject(api, { visibility: 'public' });
    const made = await api.post(`/projects/${open.id}/repository/commits`, { branch: 'master', commit_message: 'One', actions: [{ action: 'create', file_path: 'a.txt', content: 'a\n' }] });
    expect(made.status).toBe(201);
    const stranger = await api.createUser();
    const query = { first_parent: true };
    expect((await api.get(`/projects/${secret.id}/repository/commits`, { query, token: null })).status).toBe(404);
    expect((await api.get(`/projects/${secret.id}/repository/commits`, { query, token: stranger.token })).status).toBe(404);
    const owner = await api.get(`/projects/${secret.id}/repository/commits`, { query });
    expect([owner.status, owner.body.length, owner.headers.get('x-total')]).toEqual([200, 1, '1']);
    const anonymous = await api.get(`/projects/${open.id}/repository/commits`, { query, token: null });
    expect([anonymous.status, ids(anonymous.body), anonymous.headers.get('x-total')]).toEqual([200, [made.body.id], '1']);
  });
});
