import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backfill } from '../../migrations/0071_repository_path_changes.js';
import { createProject, settled } from '../support/fixtures.js';
import { gitScratch, withToken } from '../support/git.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The per-path change index (repository_path_changes) against git itself: a history of
 * branches, merges and an octopus made by `git fast-import` and pushed with `git push`, then
 * files' `last_commit_id` and blame (files API) and the commit list filtered by a path (files,
 * directories, deleted files) compared with `git log -1 -- path`, `git blame` and `git log --
 * path`.
 */

const { git, newDir, remove, env } = gitScratch('forgelog-path-history-');

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

/** `git blame --porcelain` as the API's ranges: [commit, lines] for each run of lines of one commit. */
async function gitBlame(dir: string, head: string, path: string): Promise<[string, string[]][]> {
  const ranges: [string, string[]][] = [];
  let sha = '';
  for (const row of (await git(['blame', '--porcelain', head, '--', path], dir)).split('\n')) {
    const header = /^([0-9a-f]{40}) \d+ \d+/.exec(row);
    if (header) sha = header[1]!;
    else if (row.startsWith('\t')) {
      const last = ranges[ranges.length - 1];
      if (last?.[0] === sha) last[1].push(row.slice(1));
      else ranges.push([sha, [row.slice(1)]]);
    }
  }
  return ranges;
}

interface FileState {
  readonly version: number;
  /** null: deleted. */
  readonly content: string | null;
  readonly executable: boolean;
}

/**
 * A fast-import stream: each branch owns the files under `own/<branch>/` (and master the
 * shared ones), so a merge takes each file from the side that changed it last and never
 * drops or repeats a change; committer times rise by a minute a commit (no ties, no skew),
 * so git's date order is unambiguous. Files are changed, deleted and brought back, made
 * executable and not (the same blob, another mode), and given their first content again (the
 * same entry twice on one path, where git's history simplification decides which is last).
 */
function history(commits: number): { stream: string; branches: string[]; paths: Set<string>; modeChanged: Set<string> } {
  let seed = 7;
  // mulberry32
  const random = (n: number) => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) % n;
  };
  const states = new Map<string, Map<string, FileState>>([['master', new Map()]]);
  const paths = new Set<string>();
  const modeChanged = new Set<string>();
  const out: string[] = [];
  let mark = 0;
  const marks = new Map<string, number>();
  const emit = (branch: string, changes: Map<string, FileState>, parents: string[], step: number) => {
    const date = 1_600_000_000 + step * 60;
    out.push(`commit refs/heads/${branch}`, `mark :${++mark}`, `committer Gen <gen@example.com> ${date} +0000`);
    const message = `step ${step} on ${branch}\n`;
    out.push(`data ${Buffer.byteLength(message)}`, message.slice(0, -1));
    const [from, ...merges] = parents;
    if (from !== undefined) out.push(`from :${marks.get(from)}`);
    for (const other of merges) out.push(`merge :${marks.get(other)}`);
    for (const [path, file] of changes) {
      paths.add(path);
      if (file.content === null) out.push(`D ${path}`);
      else out.push(`M ${file.executable ? '100755' : '100644'} inline ${path}`, `data ${Buffer.byteLength(file.content)}`, file.content.slice(0, -1));
    }
    out.push('');
    marks.set(branch, mark);
  };
  // A file's lines are unique (a serial number each), so every diff of two versions has one answer.
  let serial = 0;
  const line = (path: string) => `${path} line ${++serial}`;
  const first = new Map<string, string>();
  const firstContent = (path: string) => {
    if (!first.has(path)) first.set(path, `${Array.from({ length: 6 }, () => line(path)).join('\n')}\n`);
    return first.get(path)!;
  };
  /** Some lines changed, one inserted or removed now and then. */
  const edited = (path: string, content: string | null) => {
    if (content === null) return firstContent(path);
    const lines = content.slice(0, -1).split('\n');
    for (let k = 0; k < lines.length; k++) if (random(4) === 0) lines[k] = line(path);
    if (random(3) === 0) lines.splice(random(lines.length + 1), 0, line(path));
    if (random(4) === 0 && lines.length > 2) lines.splice(random(lines.length), 1);
    return `${lines.join('\n')}\n`;
  };
  const files = (branch: string) => [0, 1, 2, 3, 4].map((k) => (branch === 'master' ? `shared/s${k % 2}/f${k}.txt` : `own/${branch}/d${k % 3}/f${k}.txt`));
  const created = (path: string) => [path, { version: 1, content: firstContent(path), executable: false }] as const;
  emit('master', new Map(files('master').map(created)), [], 0);
  for (const [path, file] of files('master').map(created)) states.get('master')!.set(path, file);
  for (let step = 1; step < commits; step++) {
    const names = [...states.keys()];
    const op = random(12);
    if (op === 0 && states.size < 8) {
      const from = names[random(names.length)]!;
      const branch = `b${step}`;
      states.set(branch, new Map(states.get(from)!));
      const made = new Map(files(branch).slice(0, 2).map(created));
      for (const [path, file] of made) states.get(branch)!.set(path, file);
      emit(branch, made, [from], step);
    } else if (op <= 3 && names.length > 1) {
      const sources = [...new Set([names[random(names.length)]!, ...(op === 1 ? [names[random(names.length)]!] : [])])];
      const target = names[random(names.length)]!;
      const parents = [target, ...sources.filter((source) => source !== target)];
      if (parents.length === 1) continue;
      const merged = new Map(states.get(target)!);
      const changes = new Map<string, FileState>();
      for (const source of parents.slice(1)) {
        for (const [path, file] of states.get(source)!) {
          if ((merged.get(path)?.version ?? 0) >= file.version) continue;
          merged.set(path, file);
          changes.set(path, file);
        }
      }
      states.set(target, merged);
      emit(target, changes, parents, step);
    } else {
      const branch = names[random(names.length)]!;
      const state = states.get(branch)!;
      const changes = new Map<string, FileState>();
      for (const path of files(branch)) {
        if (random(3) !== 0) continue;
        const was = state.get(path);
        const version = (was?.version ?? 0) + 1;
        const kind = random(10);
        const file: FileState =
          kind === 0 && was?.content
            ? { version, content: null, executable: false }
            : kind === 1 && was?.content
              ? { version, content: was.content, executable: !was.executable }
              : kind === 2 && version > 2
                ? { version, content: firstContent(path), executable: false }
                : { version, content: edited(path, was?.content ?? null), executable: was?.executable ?? false };
        if (kind === 1 && was?.content) modeChanged.add(path);
        state.set(path, file);
        changes.set(path, file);
      }
      if (changes.size === 0) continue;
      emit(branch, changes, [branch], step);
    }
  }
  return { stream: `${out.join('\n')}\n`, branches: [...states.keys()], paths, modeChanged };
}

describe('the per-path change index', () => {
  it('answers last_commit_id, blame and the path-filtered commit list as git log -1 -- path, git blame and git log -- path do; the migration backfills the same rows', async () => {
    const project = await createProject(api);
    const { http_url_to_repo: url } = (await api.get(`/projects/${project.id}`)).body as { http_url_to_repo: string };
    const dir = newDir();
    await git(['init', '-q', '--bare', dir]);
    const { stream, branches, paths, modeChanged } = history(250);
    const imported = spawnSync('/usr/bin/git', ['fast-import', '--quiet'], { cwd: dir, env, input: stream });
    expect(imported.stderr.toString()).toBe('');
    expect(imported.status).toBe(0);
    expect(branches.length).toBeGreaterThanOrEqual(5);
    expect(Number((await git(['rev-list', '--count', '--merges', '--all'], dir)).trim())).toBeGreaterThan(20);
    await git(['push', '-q', withToken(url, api.rootToken), '--all'], dir);

    const directories = new Set([...paths].flatMap((path) => path.split('/').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
    let compared = 0;
    let blamed = 0;
    for (const branch of branches) {
      const head = (await git(['rev-parse', branch], dir)).trim();
      const present = lines(await git(['ls-tree', '-r', '--name-only', head], dir));
      const every = <T>(items: readonly T[], most: number) => items.filter((_, i) => i % Math.ceil(items.length / most) === 0);
      for (const path of every(present, 10)) {
        const file = await api.get(`/projects/${project.id}/repository/files/${encodeURIComponent(path)}`, { query: { ref: branch } });
        expect(file.status).toBe(200);
        expect([path, file.body.last_commit_id]).toEqual([path, (await git(['log', '-1', '--format=%H', head, '--', path], dir)).trim()]);
        const blame = await api.get(`/projects/${project.id}/repository/files/${encodeURIComponent(path)}/blame`, { query: { ref: branch } });
        expect(blame.status).toBe(200);
        // git blame passes a line on through a change of mode alone (it compares blobs, where the log compares entries); forgelog's follows the log.
        if (!modeChanged.has(path)) {
          expect([path, blame.body.map((range: { commit: { id: string }; lines: string[] }) => [range.commit.id, range.lines])]).toEqual([path, await gitBlame(dir, head, path)]);
          blamed++;
        }
        compared++;
      }
      for (const path of [...[...paths].filter((p) => !present.includes(p)).slice(0, 3), ...every([...directories], 5), present[0]!]) {
        const expected = lines(await git(['log', '--format=%H', head, '--', path], dir));
        const list = await api.get(`/projects/${project.id}/repository/commits`, { query: { ref_name: branch, path, per_page: 100 } });
        expect(list.status).toBe(200);
        expect([path, list.body.map((c: { id: string }) => c.id)]).toEqual([path, expected.slice(0, 100)]);
        expect(list.headers.get('x-total')).toBe(String(expected.length));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(80);
    expect(blamed).toBeGreaterThan(20);

    const db = api.handle.db;
    const rows = () => db.selectFrom('repository_path_changes').selectAll().where('project_id', '=', project.id).orderBy('path').orderBy('commit_sha').execute();
    const indexed = await rows();
    expect(indexed.length).toBeGreaterThan(500);
    // What the history holds: merges that took a path from a side other than the first, and one entry given twice to a path.
    expect(indexed.some((row) => row.follow !== null)).toBe(true);
    const shown = indexed.filter((row) => row.follow === null && row.entry !== null).map((row) => `${row.path} ${row.entry}`);
    expect(new Set(shown).size).toBeLessThan(shown.length);
    await db.deleteFrom('repository_path_changes').where('project_id', '=', project.id).execute();
    await backfill(db, project.id);
    expect(await rows()).toEqual(indexed);
    await expect(db.updateTable('repository_path_changes').set({ entry: null }).where('project_id', '=', project.id).execute()).rejects.toThrow(/append-only/);
  }, 180_000);

  it('keeps a path longer than an index entry can hold (3,600 bytes of random names): written, its last commit and log read', async () => {
    const project = await createProject(api);
    const path = `${Array.from({ length: 30 }, () => randomBytes(60).toString('hex')).join('/')}/f.txt`;
    const made = await api.post(`/projects/${project.id}/repository/commits`, { branch: 'master', commit_message: 'Deep', actions: [{ action: 'create', file_path: path, content: 'x\n' }] });
    expect(made.status).toBe(201);
    const file = await api.get(`/projects/${project.id}/repository/files/${encodeURIComponent(path)}`, { query: { ref: 'master' } });
    expect([file.status, file.body.last_commit_id]).toEqual([200, made.body.id]);
    const log = await api.get(`/projects/${project.id}/repository/commits`, { query: { ref_name: 'master', path: path.split('/').slice(0, 20).join('/') } });
    expect(log.body.map((c: { id: string }) => c.id)).toEqual([made.body.id]);
  });
});
