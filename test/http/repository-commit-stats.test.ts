import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfill } from '../../migrations/0072_repository_commit_stats.js';
import { verifyLog } from '../../src/eventstore/verify.js';
import { repositoryObjectsCheck } from '../../src/projections/repository/verify.js';
import { createProject, settled } from '../support/fixtures.js';
import { gitScratch, withToken } from '../support/git.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Commits' `stats` as they are stored with the commit (repository_commit_stats, migration 0072)
 * against `git show --numstat`: a fast-import history of edits, additions, deletions, a file
 * moved unchanged, a mode change alone, a file without its last newline, a merge and a root;
 * the single commit reads them; the migration's backfill counts the same; a fork has them
 * (and the source's per-path change index); `events verify` finds an edited or missing row.
 */

const { git, newDir, remove, env } = gitScratch('forgelog-commit-stats-');

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(async () => {
  await api.close();
  remove();
});

/** A history of `commits` commits on master (every 10th a merge of a side branch), the same every run. */
function history(commits: number): string {
  let seed = 11;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const out: string[] = [];
  let mark = 0;
  let time = 1_600_000_000;
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const files = new Map<string, string[]>();
  const body = (lines: string[], newline = true) => lines.join('\n') + (newline && lines.length > 0 ? '\n' : '');
  const commit = (ref: string, from: number | null, merge: number | null, ops: string[]) => {
    mark++;
    time += 60;
    const who = `Stats <stats@example.com> ${time} +0000`;
    out.push(`commit ${ref}\nmark :${mark}\nauthor ${who}\ncommitter ${who}\n${data(`Commit ${mark}`)}`);
    if (from !== null) out.push(`from :${from}\n`);
    if (merge !== null) out.push(`merge :${merge}\n`);
    out.push(...ops, '\n');
    return mark;
  };
  const put = (path: string, lines: string[], mode = '100644', newline = true) => {
    files.set(path, lines);
    return `M ${mode} inline ${path}\n${data(body(lines, newline))}`;
  };
  const initial = Array.from({ length: 6 }, (_, f) => put(`dir${f % 2}/file${f}.txt`, Array.from({ length: 20 }, (_, l) => `line ${l} of ${f}`)));
  let head = commit('refs/heads/master', null, null, initial);
  for (let k = 1; k < commits; k++) {
    const paths = [...files.keys()];
    const path = paths[random(paths.length)]!;
    const lines = [...files.get(path)!];
    if (k % 10 === 0) {
      const side = commit('refs/heads/side', head, null, [put(`side/s${k}.txt`, [`side ${k}`, 'more'])]);
      head = commit('refs/heads/master', head, side, [put(`side/s${k}.txt`, [`side ${k}`, 'more']), put(path, [...lines, `merged ${k}`])]);
      continue;
    }
    const ops: string[] = [];
    switch (k % 7) {
      case 0: // a file moved unchanged: no line
        files.delete(path);
        ops.push(`R ${path} moved/${k}-${path.split('/').pop()}\n`);
        files.set(`moved/${k}-${path.split('/').pop()}`, lines);
        break;
      case 1: // deleted, and another one added
        files.delete(path);
        ops.push(`D ${path}\n`, put(`new/n${k}.txt`, Array.from({ length: 1 + random(8) }, (_, l) => `new ${k} ${l}`)));
        break;
      case 2: // the mode alone
        ops.push(put(path, lines, '100755'));
        break;
      case 3: // the last newline dropped
        ops.push(put(path, lines, '100644', false));
        break;
      default: {
        // lines replaced, inserted and removed
        const edited = lines.flatMap((line, i) => (random(5) === 0 ? [] : random(4) === 0 ? [`${line} (edit ${k})`] : random(6) === 0 ? [line, `inserted ${k} ${i}`] : [line]));
        ops.push(put(path, edited));
      }
    }
    head = commit('refs/heads/master', head, null, ops);
  }
  return out.join('');
}

/** `git show --numstat`'s lines summed (a merge against its first parent, as GitLab's CommitStats). */
async function numstat(dir: string, sha: string): Promise<{ additions: number; deletions: number }> {
  const out = await git(['show', '--numstat', '--format=', '--first-parent', '-m', sha], dir);
  let [additions, deletions] = [0, 0];
  for (const line of out.split('\n').filter((l) => l !== '')) {
    const [a, d] = line.split('\t');
    additions += Number(a);
    deletions += Number(d);
  }
  return { additions, deletions };
}

describe('commit stats', () => {
  it('stores each commit stats as git show --numstat counts them, reads them for the commit, backfills them and copies them to a fork', async () => {
    const project = await createProject(api);
    const { http_url_to_repo: url } = (await api.get(`/projects/${project.id}`)).body as { http_url_to_repo: string };
    const dir = newDir();
    await git(['init', '-q', '--bare', dir]);
    const imported = spawnSync('/usr/bin/git', ['fast-import', '--quiet'], { cwd: dir, env, input: history(60) });
    expect(imported.stderr.toString()).toBe('');
    expect(imported.status).toBe(0);
    await git(['push', '-q', withToken(url, api.rootToken), 'master'], dir);

    const shas = (await git(['rev-list', 'master'], dir)).trim().split('\n');
    expect(shas.length).toBeGreaterThan(60);
    const db = api.handle.db;
    const rows = () => db.selectFrom('repository_commit_stats').selectAll().where('project_id', '=', project.id).orderBy('commit_sha').execute();
    const stored = await rows();
    expect(stored.length).toBe(shas.length);
    const bySha = new Map(stored.map((row) => [row.commit_sha, { additions: row.additions, deletions: row.deletions }]));
    let nonzero = 0;
    for (const sha of shas) {
      const expected = await numstat(dir, sha);
      expect([sha, bySha.get(sha)]).toEqual([sha, expected]);
      if (expected.additions + expected.deletions > 0) nonzero++;
    }
    expect(nonzero).toBeGreaterThan(40);
    // Commits that count no line: a file moved unchanged, a mode change alone.
    expect(stored.filter((row) => row.additions + row.deletions === 0).length).toBeGreaterThan(5);

    const some = shas.filter((_, i) => i % 9 === 0);
    for (const sha of some) {
      const one = await api.get(`/projects/${project.id}/repository/commits/${sha}`);
      expect(one.status).toBe(200);
      expect(one.body.stats).toEqual({ ...bySha.get(sha), total: bySha.get(sha)!.additions + bySha.get(sha)!.deletions });
    }
    // The list with with_stats=true (Entities::CommitWithStats), a page of them; without it, no stats.
    const page = await api.get(`/projects/${project.id}/repository/commits`, { query: { with_stats: true, per_page: 30, all: true } });
    expect(page.body).toHaveLength(30);
    for (const listed of page.body) expect([listed.id, listed.stats]).toEqual([listed.id, { ...bySha.get(listed.id), total: bySha.get(listed.id)!.additions + bySha.get(listed.id)!.deletions }]);
    expect((await api.get(`/projects/${project.id}/repository/commits`, { query: { per_page: 3 } })).body.map((c: any) => 'stats' in c)).toEqual([false, false, false]);
    await db.deleteFrom('repository_commit_stats').where('project_id', '=', project.id).execute();
    await backfill(db, project.id);
    expect(await rows()).toEqual(stored);
    await expect(db.updateTable('repository_commit_stats').set({ additions: 0 }).where('project_id', '=', project.id).execute()).rejects.toThrow(/append-only/);

    const fork = await api.post(`/projects/${project.id}/fork`, { path: `${project.path}-fork`, name: `${project.name} fork` });
    expect(fork.status).toBe(201);
    const forked = await api.get(`/projects/${fork.body.id}/repository/commits/${shas[1]}`);
    expect(forked.body.stats).toMatchObject(bySha.get(shas[1]!)!);
    expect((await db.selectFrom('repository_commit_stats').select('commit_sha').where('project_id', '=', fork.body.id).execute()).length).toBe(stored.length);
    // The fork's per-path change index is the source's: a file's last commit is git's.
    const path = (await git(['ls-tree', '-r', '--name-only', 'master'], dir)).trim().split('\n')[0]!;
    const file = await api.get(`/projects/${fork.body.id}/repository/files/${encodeURIComponent(path)}`, { query: { ref: 'master' } });
    expect([file.status, file.body.last_commit_id]).toEqual([200, (await git(['log', '-1', '--format=%H', 'master', '--', path], dir)).trim()]);
  }, 180_000);

  it('events verify reports a commit whose stats row was edited or removed', async () => {
    const project = await createProject(api);
    const made = await api.post(`/projects/${project.id}/repository/commits`, {
      branch: 'master',
      commit_message: 'Two files',
      actions: [
        { action: 'create', file_path: 'a.txt', content: 'one\ntwo\n' },
        { action: 'create', file_path: 'b.txt', content: 'three\n' },
      ],
    });
    expect(made.status).toBe(201);
    expect(made.body.stats).toEqual({ additions: 3, deletions: 0, total: 3 });
    const db = api.handle.db;
    const mismatches = async () =>
      (await verifyLog(db, { objects: repositoryObjectsCheck(db) })).problems.filter((p) => p.kind === 'commit_index_mismatch' && p.projectId === project.id).map((p) => p.detail);
    expect(await mismatches()).toEqual([]);
    const row = await db.selectFrom('repository_commit_stats').selectAll().where('project_id', '=', project.id).where('commit_sha', '=', made.body.id).executeTakeFirstOrThrow();
    await db.deleteFrom('repository_commit_stats').where('project_id', '=', project.id).execute();
    try {
      await db.insertInto('repository_commit_stats').values({ ...row, additions: 7 }).execute();
      expect(await mismatches()).toEqual([`project ${project.id}'s commit ${made.body.id}: its stats (7 additions, 0 deletions) are not what its diff gives (3 additions, 0 deletions)`]);
      await db.deleteFrom('repository_commit_stats').where('project_id', '=', project.id).execute();
      expect(await mismatches()).toEqual([`project ${project.id}'s commit ${made.body.id}: no row of stats`]);
      // Read without its row, the commit's stats are counted again.
      expect((await api.get(`/projects/${project.id}/repository/commits/${made.body.id}`)).body.stats).toEqual({ additions: 3, deletions: 0, total: 3 });
    } finally {
      await db.deleteFrom('repository_commit_stats').where('project_id', '=', project.id).execute();
      await db.insertInto('repository_commit_stats').values(row).execute();
    }
  });
});
