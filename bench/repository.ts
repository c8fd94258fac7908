/**
 * The repository reads as users run them (issue 23 §4; bench/README.md, "Repository"): forgelog
 * started as `npm start` starts it, on a database of its own, with two projects — a history of
 * BENCH_REPO_COMMITS (10,000) commits, BENCH_REPO_BRANCHES (500) branches and BENCH_REPO_MRS
 * (5,000) merge requests, and one a tenth of that. Each history is written by `git fast-import`
 * and pushed with `git push` over smart HTTP (the server's own push path: pack checks,
 * storeObjects, the ref events), the merge requests opened through the API, once the pushes'
 * followers have caught up, by 8 connections of the load generator (that is the creation
 * figure). Then, at 32 connections from the load generator, as root: the commit
 * list, the branch list, a file with its last_commit_id, a single commit, a merge request's
 * version and its changes, the two sizes side by side in rounds; and compare of 100 commits
 * alone. Targets: ≥ 500 req/s with p90 < 50 ms, compare p90 < 50 ms, creation ≥ 100/s, and at
 * full size each rate at least 0.8 of the tenth's (compare: its p90 at most 1/0.8 of it).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { analyze, followersCaughtUp, median, settle } from './blackbox/measure.js';
import { memoryOf, startForgelog } from './blackbox/processes.js';
import type { LoadGenerator } from './harness/load-generator.js';
import type { LoadFigure } from './harness/scenarios.js';
import { log, processCpu, round } from './harness/meters.js';
import { createDatabase, type Cleanups } from './harness/setup.js';
import { CONNECTIONS, ROUNDS, SECONDS, SLICE_SECONDS, WARMUP_SECONDS } from './harness/settings.js';
import type { LoadJob } from './loadgen.js';

const run = promisify(execFile);
const num = (v: string | undefined, d: number) => (v === undefined || v === '' || !Number.isFinite(Number(v)) ? d : Number(v));
export const REPO_COMMITS = num(process.env.BENCH_REPO_COMMITS, 10_000);
export const REPO_BRANCHES = num(process.env.BENCH_REPO_BRANCHES, 500);
export const REPO_MRS = num(process.env.BENCH_REPO_MRS, 5_000);
/** The smaller history is this many times smaller (the issue's "a tenth"). */
export const REPO_SCALE = num(process.env.BENCH_REPO_SCALE, 10);
/** Clients opening the merge requests at once. */
export const REPO_MR_CLIENTS = num(process.env.BENCH_REPO_MR_CLIENTS, 8);

const TARGETS = { rps: 500, p90Ms: 50, compareP90Ms: 50, creationPerSecond: 100, sameWithin: 0.8 } as const;
/** Files of every history besides README.md, in ten directories: the same tree at both sizes. */
const FILES = 500;
const LINES = 30;
/** Master's every MERGE_EVERY-th commit merges a side line of two commits. */
const MERGE_EVERY = 50;
/** Branches fork from master's last FORK_WINDOW commits (a merge request costs its branch's distance from the target, as in git; the figure is about the history's length). */
const FORK_WINDOW = 200;
/** One branch in MERGED_EVERY points at a commit of master (its `merged` is true). */
const MERGED_EVERY = 10;
const COMPARE_COMMITS = 100;
/** The untimed history the server is warmed up on (measureRepository). */
const WARM_UP: Size = { label: 'warm-up', commits: 200, branches: 25, mergeRequests: 400 };
const PUSH_BATCH = 100;

interface Size {
  label: 'tenth' | 'full' | 'warm-up';
  commits: number;
  branches: number;
  mergeRequests: number;
}

interface History {
  /** The fast-import stream. */
  stream: string;
  /** Master's first-parent line, oldest first: its mark and how many commits it reaches. */
  master: { mark: number; reaches: number }[];
  branches: { name: string; mark: number; commits: number }[];
  commits: number;
  paths: string[];
}

// ───────────────────────────── The history ─────────────────────────────

const fileOf = (f: number) => `d${f % 10}/f${f}.txt`;
const content = (f: number, k: number) =>
  Array.from({ length: LINES }, (_, j) => (j === k % LINES ? `line ${j} of file ${f}, changed by commit ${k}` : `line ${j} of file ${f}`)).join('\n') + '\n';

/**
 * A history of `size.commits` commits: a root commit with README.md and FILES files, master's
 * line (one file changed per commit, every MERGE_EVERY-th a merge of two side commits), and
 * `size.branches` branches forked from master's recent commits, two commits each (one in
 * MERGED_EVERY at a commit of master). Committer times a minute apart, in the stream's order.
 */
function history(size: Size): History {
  const out: string[] = [];
  let mark = 0;
  let time = 1_600_000_000;
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const commit = (ref: string, message: string, from: number | null, merge: number | null, files: [string, string][]) => {
    mark++;
    time += 60;
    const who = `Bench Author <bench@example.com> ${time} +0000`;
    out.push(`commit ${ref}\nmark :${mark}\nauthor ${who}\ncommitter ${who}\n${data(message)}`);
    if (from !== null) out.push(`from :${from}\n`);
    if (merge !== null) out.push(`merge :${merge}\n`);
    for (const [path, text] of files) out.push(`M 100644 inline ${path}\n${data(text)}`);
    out.push('\n');
    return mark;
  };
  const withCommits = size.branches - Math.floor(size.branches / MERGED_EVERY);
  const masterCommits = Math.max(2, size.commits - 2 * withCommits);

  const root = commit('refs/heads/master', 'Initial commit', null, null, [['README.md', '# Bench\n\nA generated history.\n'], ...Array.from({ length: FILES }, (_, f): [string, string] => [fileOf(f), content(f, -1)])]);
  const master = [{ mark: root, reaches: 1 }];
  let reaches = 1;
  for (let k = 1; reaches < masterCommits; k++) {
    const head = master.at(-1)!.mark;
    const f = (k * 7) % FILES;
    if (k % MERGE_EVERY === 0 && masterCommits - reaches >= 3) {
      const side = `side/s${(k / MERGE_EVERY) % 20}.txt`;
      const s1 = commit('refs/heads/side', `Side ${k} one`, head, null, [[side, `side ${k}\n`]]);
      const s2 = commit('refs/heads/side', `Side ${k} two`, s1, null, [[side, `side ${k}\nand more\n`]]);
      const merged = commit('refs/heads/master', `Merge branch 'side-${k}' into 'master'`, head, s2, [[side, `side ${k}\nand more\n`]]);
      reaches += 3;
      master.push({ mark: merged, reaches });
    } else {
      reaches += 1;
      master.push({ mark: commit('refs/heads/master', `Change ${k}\n\nA line of history.`, head, null, [[fileOf(f), content(f, k)]]), reaches });
    }
  }
  const branches: History['branches'] = [];
  let commits = reaches;
  for (let i = 0; i < size.branches; i++) {
    const fork = master[master.length - 1 - ((i * 37) % Math.min(FORK_WINDOW, master.length))]!.mark;
    const name = `feature-${i}`;
    if (i % MERGED_EVERY === MERGED_EVERY - 1) {
      out.push(`reset refs/heads/${name}\nfrom :${fork}\n\n`);
      branches.push({ name, mark: fork, commits: 0 });
      continue;
    }
    const f = (i * 11) % FILES;
    const one = commit(`refs/heads/${name}`, `Feature ${i}`, fork, null, [[`features/feature-${i}.txt`, `feature ${i}\n`]]);
    const two = commit(`refs/heads/${name}`, `Feature ${i}, its change`, one, null, [[fileOf(f), content(f, 1_000_000 + i)]]);
    branches.push({ name, mark: two, commits: 2 });
    commits += 2;
  }
  return { stream: out.join(''), master, branches, commits, paths: ['README.md', ...Array.from({ length: FILES }, (_, f) => fileOf(f))] };
}

/** Writes the history with `git fast-import` into a new bare repository; returns the marks' SHAs. */
async function fastImport(dir: string, stream: string): Promise<Map<number, string>> {
  await run('git', ['init', '--quiet', '--bare', dir]);
  const marks = join(dir, 'marks');
  await new Promise<void>((resolve, reject) => {
    const child = spawn('git', ['fast-import', '--quiet', `--export-marks=${marks}`], { cwd: dir, env: { ...process.env, GIT_DIR: dir }, stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`git fast-import exited with ${code}: ${err.slice(-2000)}`))));
    child.stdin.end(stream);
  });
  return new Map(
    readFileSync(marks, 'utf8')
      .trim()
      .split('\n')
      .map((line) => [Number(line.slice(1, line.indexOf(' '))), line.slice(line.indexOf(' ') + 1)]),
  );
}

// ───────────────────────────── Seeding ─────────────────────────────

/** A request as root. */
async function call<T>(base: string, token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${base}/api/v4${path}`, {
    method,
    headers: { 'PRIVATE-TOKEN': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

export interface SizeFigures extends Size {
  project: { id: number; path: string };
  seed: { generateSeconds: number; pushSeconds: number; pushes: number; objects: number; packMb: number; mergeRequestSeconds: number };
  /** Merge request creation by REPO_MR_CLIENTS connections of the load generator; `non2xx`: openings refused (a 409 Resource lock: none is tried again). */
  creation: { perSecond: number; p50: number; p90: number; p99: number; count: number; clients: number; non2xx: number };
  reads: ReadFigure[];
  compare: { commits: number; rps: number; p50: number; p90: number; p99: number; requests: number; non2xx: number };
}

export interface ReadFigure extends LoadFigure {
  name: string;
  rpsByRound: number[];
  cpu: Record<string, number>;
}

export interface RepositoryFigures {
  sizes: SizeFigures[];
  memory: { peakMb: number };
  settings: Record<string, number>;
}

interface Seeded {
  size: Size;
  project: { id: number; path: string };
  shas: Map<number, string>;
  history: History;
  seed: SizeFigures['seed'];
  creation: SizeFigures['creation'];
}

/** The project, its history pushed (master first, then the branches PUSH_BATCH at a time), then its merge requests. */
async function seedSize(gen: LoadGenerator, base: string, token: string, size: Size, work: string): Promise<Seeded> {
  log(`repository ${size.label}: ${size.commits} commits, ${size.branches} branches, ${size.mergeRequests} merge requests`);
  const started = performance.now();
  const h = history(size);
  const dir = join(work, size.label);
  const shas = await fastImport(dir, h.stream);
  const generateSeconds = round((performance.now() - started) / 1000, 1);
  const { stdout: counted } = await run('git', ['--git-dir', dir, 'count-objects', '-v']);
  const objects = Number(/^count: (\d+)/m.exec(counted)?.[1] ?? 0) + Number(/^in-pack: (\d+)/m.exec(counted)?.[1] ?? 0);
  const packMb = round((Number(/^size-pack: (\d+)/m.exec(counted)?.[1] ?? 0) + Number(/^size: (\d+)/m.exec(counted)?.[1] ?? 0)) / 1024, 2);
  log(`  git fast-import: ${h.commits} commits, ${objects} objects (${packMb} MiB packed) in ${generateSeconds} s`);

  const project = await call<{ id: number; path_with_namespace: string }>(base, token, 'POST', '/projects', { name: `history ${size.label}`, path: `history-${size.label}` });
  const remote = `${base.replace('http://', `http://root:${token}@`)}/${project.path_with_namespace}.git`;
  const refspecs = [['refs/heads/master:refs/heads/master'], ...chunks(h.branches.map((b) => `refs/heads/${b.name}:refs/heads/${b.name}`), PUSH_BATCH)];
  const pushStarted = performance.now();
  for (const specs of refspecs) await run('git', ['--git-dir', dir, 'push', '--quiet', remote, ...specs], { env: { ...process.env, GIT_TERMINAL_PROMPT: '0' }, maxBuffer: 64 * 1024 * 1024 });
  const pushSeconds = round((performance.now() - pushStarted) / 1000, 1);
  log(`  git push over smart HTTP: ${refspecs.length} pushes in ${pushSeconds} s (${round(objects / pushSeconds)} objects/s)`);
  const p = `/projects/${project.id}`;
  const total = (await fetch(`${base}/api/v4${p}/repository/commits?per_page=1`, { headers: { 'PRIVATE-TOKEN': token } })).headers.get('x-total');
  if (Number(total) !== h.master.at(-1)!.reaches) throw new Error(`master has ${total} commits on the server, ${h.master.at(-1)!.reaches} pushed`);
  // The openings are timed on a server that is done with the pushes: its activity, its
  // merge requests' refresh and the rest of what follows a push run in the background.
  const caughtUp = await followersCaughtUp(base);
  log(`  the pushes' followers caught up in ${caughtUp} s`);

  // Merge requests: each open source branch into master, then into the branches after it, one
  // (source, target) pair each, sent once each by the load generator's REPO_MR_CLIENTS connections.
  const sources = h.branches.filter((b) => b.commits > 0);
  if (size.mergeRequests > sources.length * size.branches) throw new Error(`BENCH_REPO_MRS=${size.mergeRequests} needs more branches`);
  const openings = Array.from({ length: size.mergeRequests }, (_, n) => {
    const s = n % sources.length;
    const k = Math.floor(n / sources.length);
    const source = sources[s]!.name;
    const target = k === 0 ? 'master' : h.branches[(h.branches.indexOf(sources[s]!) + k) % h.branches.length]!.name;
    const body = JSON.stringify({ title: `${source} into ${target}`, description: `Merges ${source}.`, source_branch: source, target_branch: target });
    return { method: 'POST', path: `/api/v4${p}/merge_requests`, headers: { 'PRIVATE-TOKEN': token, 'content-type': 'application/json' }, body };
  });
  const opened = await gen.run({ url: base, connections: REPO_MR_CLIENTS, seconds: 600, requests: openings, once: true });
  if (opened.requests !== size.mergeRequests || opened.errors > 0) throw new Error(`${size.mergeRequests} merge requests asked, ${opened.requests} answered, ${opened.errors} errors: ${JSON.stringify(opened.statusCodes)}`);
  const creation = { perSecond: round(size.mergeRequests / opened.seconds, 1), p50: opened.latency.p50, p90: opened.latency.p90, p99: opened.latency.p99, count: size.mergeRequests, clients: REPO_MR_CLIENTS, non2xx: opened.non2xx };
  log(`  ${size.mergeRequests} merge requests by ${REPO_MR_CLIENTS} clients in ${round(opened.seconds, 1)} s: ${creation.perSecond}/s, p90 ${creation.p90} ms${opened.non2xx ? `, ${opened.non2xx} not opened: ${JSON.stringify(opened.statusCodes)}` : ''}`);
  return {
    size,
    project: { id: project.id, path: project.path_with_namespace },
    shas,
    history: h,
    seed: { generateSeconds, pushSeconds, pushes: refspecs.length, objects, packMb, mergeRequestSeconds: round(opened.seconds, 1) },
    creation,
  };
}

const chunks = <T>(xs: readonly T[], n: number) => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, (i + 1) * n));
/** `count` items of `xs` spread evenly over it. */
const spread = <T>(xs: readonly T[], count: number) => Array.from({ length: count }, (_, i) => xs[Math.floor((i * xs.length) / count)]!);

// ───────────────────────────── Reads ─────────────────────────────

interface Read {
  name: string;
  paths: string[];
}

/** What each connection asks (connection i: the i-th path), per endpoint, for one project. */
async function readsOf(base: string, token: string, s: Seeded): Promise<{ reads: Read[]; compare: { path: string; commits: number } }> {
  const p = `/api/v4/projects/${s.project.id}`;
  const sha = (mark: number) => s.shas.get(mark)!;
  const iids = spread(
    Array.from({ length: s.size.mergeRequests }, (_, i) => i + 1),
    Math.min(CONNECTIONS, s.size.mergeRequests),
  );
  const versions = await Promise.all(iids.map(async (iid) => [iid, (await call<{ id: number }[]>(base, token, 'GET', `/projects/${s.project.id}/merge_requests/${iid}/versions`))[0]!.id] as const));
  const head = s.history.master.at(-1)!;
  const from = s.history.master.findLast((m) => head.reaches - m.reaches >= COMPARE_COMMITS) ?? s.history.master[0]!;
  const compare = `${p}/repository/compare?from=${sha(from.mark)}&to=master`;
  const answer = await call<{ commits: unknown[] }>(base, token, 'GET', compare.slice('/api/v4'.length));
  return {
    reads: [
      { name: 'GET …/repository/commits', paths: [`${p}/repository/commits`] },
      { name: 'GET …/repository/branches', paths: [`${p}/repository/branches`] },
      { name: 'GET …/repository/files/:path', paths: spread(s.history.paths, CONNECTIONS).map((path) => `${p}/repository/files/${encodeURIComponent(path)}?ref=master`) },
      { name: 'GET …/repository/commits/:sha', paths: spread(s.history.master, CONNECTIONS).map((m) => `${p}/repository/commits/${sha(m.mark)}`) },
      { name: 'GET …/merge_requests/:iid/versions/:id', paths: versions.map(([iid, id]) => `${p}/merge_requests/${iid}/versions/${id}`) },
      { name: 'GET …/merge_requests/:iid/changes', paths: iids.map((iid) => `${p}/merge_requests/${iid}/changes`) },
    ],
    compare: { path: compare, commits: answer.commits.length },
  };
}

export async function measureRepository(gen: LoadGenerator, database: string, cleanups: Cleanups): Promise<RepositoryFigures> {
  const full: Size = { label: 'full', commits: REPO_COMMITS, branches: REPO_BRANCHES, mergeRequests: REPO_MRS };
  const tenth: Size = { label: 'tenth', commits: Math.round(REPO_COMMITS / REPO_SCALE), branches: Math.max(2, Math.round(REPO_BRANCHES / REPO_SCALE)), mergeRequests: Math.max(1, Math.round(REPO_MRS / REPO_SCALE)) };
  const { url } = await createDatabase(database, cleanups);
  const token = `bench-root-${process.pid}-${Date.now().toString(36)}`;
  const forgelog = await startForgelog(url, token);
  cleanups.push(forgelog.stop);
  const work = mkdtempSync(join(tmpdir(), 'forgelog-bench-repository-'));
  cleanups.push(() => rmSync(work, { recursive: true, force: true }));
  try {
    // A server just started answers its first requests slower (V8 has not optimised the hot
    // paths; PostgreSQL's connections have not prepared their statements): 500 openings on it
    // measured 82/s, the same 500 after another 500 ~100/s. A smaller history is pushed and
    // opened first, untimed.
    await seedSize(gen, forgelog.base, token, WARM_UP, work);
    const seeded: Seeded[] = [];
    for (const size of [tenth, full]) seeded.push(await seedSize(gen, forgelog.base, token, size, work));
    const caughtUp = await followersCaughtUp(forgelog.base);
    log(`  the async projections and reactors caught up in ${caughtUp} s`);
    await analyze(url);

    const asked = await Promise.all(seeded.map((s) => readsOf(forgelog.base, token, s)));
    const headers = { 'PRIVATE-TOKEN': token };
    const jobOf = (read: Read): Omit<LoadJob, 'seconds'> => ({ url: forgelog.base, connections: CONNECTIONS, requests: read.paths.map((path) => ({ method: 'GET', path, headers })) });
    const pids = { forgelog: forgelog.pid, loadgen: gen.child.pid };
    const names = asked[0]!.reads.map((r) => r.name);

    log(`repository reads: ${names.length} endpoints × ${seeded.length} histories, ${ROUNDS} rounds of ${SLICE_SECONDS} s slices at ${CONNECTIONS} connections (after ${WARMUP_SECONDS} s of warm-up each)…`);
    for (const [e] of names.entries()) {
      for (const a of asked) {
        if (WARMUP_SECONDS <= 0) break;
        const r = await gen.run({ ...jobOf(a.reads[e]!), seconds: WARMUP_SECONDS });
        if (r.requests > 0 && r.non2xx === r.requests) throw new Error(`${a.reads[e]!.name}: every answer of the warm-up was non-2xx: ${JSON.stringify(r.statusCodes)}`);
        await settle(r, CONNECTIONS);
      }
    }
    const runId = `${Date.now()}-${Math.random()}`;
    const acc = asked.map(() => names.map(() => ({ rpsByRound: [] as number[], ticks: [] as Record<string, number>[] })));
    for (let r = 0; r < ROUNDS; r++) {
      const order = names.map((_, i) => i);
      if (r % 2 === 1) order.reverse();
      for (const e of order) {
        const sides = asked.map((_, i) => i);
        if (r % 2 === 1) sides.reverse();
        for (const i of sides) {
          const cpu = processCpu(pids);
          const result = await gen.run({ ...jobOf(asked[i]!.reads[e]!), seconds: SLICE_SECONDS }, `${runId}:${i}:${e}`);
          acc[i]![e]!.ticks.push(cpu());
          acc[i]![e]!.rpsByRound.push(result.seconds > 0 ? result.requests / result.seconds : 0);
          await settle(result, CONNECTIONS);
        }
      }
      log(`  round ${r + 1}/${ROUNDS} done`);
    }

    const sizes: SizeFigures[] = [];
    for (const [i, s] of seeded.entries()) {
      const reads: ReadFigure[] = [];
      for (const [e, name] of names.entries()) {
        const merged = await gen.collect(`${runId}:${i}:${e}`, forgelog.base, CONNECTIONS);
        const a = acc[i]![e]!;
        const cpu: Record<string, number> = {};
        for (const key of Object.keys(a.ticks[0] ?? {})) if (key !== 'seconds') cpu[key] = round(median(a.ticks.map((t) => t[key]!)), 2);
        reads.push({ name, rps: round(median(a.rpsByRound)), rpsByRound: a.rpsByRound.map((x) => round(x)), p50: merged.latency.p50, p90: merged.latency.p90, p99: merged.latency.p99, requests: merged.requests, non2xx: merged.non2xx, errors: merged.errors, statusCodes: merged.statusCodes, cpu });
        log(`  ${s.size.label} ${name}: ${reads.at(-1)!.rps} req/s, p90 ${merged.latency.p90} ms${merged.non2xx ? `, NON-2XX ${JSON.stringify(merged.statusCodes)}` : ''}`);
      }
      const c = asked[i]!.compare;
      log(`  ${s.size.label} compare of ${c.commits} commits alone (1 connection) for ${SECONDS} s…`);
      const alone = await gen.run({ url: forgelog.base, connections: 1, seconds: SECONDS, requests: [{ method: 'GET', path: c.path, headers }] });
      const compare = { commits: c.commits, rps: round(alone.rps, 1), p50: alone.latency.p50, p90: alone.latency.p90, p99: alone.latency.p99, requests: alone.requests, non2xx: alone.non2xx };
      sizes.push({ ...s.size, project: s.project, seed: s.seed, creation: s.creation, reads, compare });
    }
    return {
      sizes,
      memory: { peakMb: memoryOf(forgelog.pid).peakMb },
      settings: { rounds: ROUNDS, sliceSeconds: SLICE_SECONDS, warmupSeconds: WARMUP_SECONDS, connections: CONNECTIONS, aloneSeconds: SECONDS, scale: REPO_SCALE, mergeRequestClients: REPO_MR_CLIENTS, files: FILES, forkWindow: FORK_WINDOW },
    };
  } finally {
    await forgelog.stop();
  }
}

// ───────────────────────────── Report ─────────────────────────────

/** The section's lines (each figure beside its target, both sizes and their ratio) and the targets missed. */
export function repositoryReport(f: RepositoryFigures): { lines: string[]; missed: string[] } {
  const missed: string[] = [];
  const small = f.sizes.find((s) => s.label === 'tenth');
  const big = f.sizes.find((s) => s.label === 'full');
  const verdict = (ok: boolean, what: string) => {
    if (!ok) missed.push(what);
    return ok ? 'ok' : 'NOT MET';
  };
  const rows: string[][] = [];
  const figure = (rate: number, p90: number) => `${rate} /s, p90 ${p90.toFixed(1)} ms`;
  for (const [e, name] of (big ?? small)!.reads.map((r) => r.name).entries()) {
    const cells = [name];
    const checks: string[] = [];
    for (const s of [small, big]) {
      const r = s?.reads[e];
      cells.push(r ? figure(r.rps, r.p90) + (r.non2xx || r.errors ? ` (NON-2XX ${r.non2xx}, errors ${r.errors})` : '') : '—');
      if (r) checks.push(`${s!.label} ${verdict(r.rps >= TARGETS.rps && r.p90 < TARGETS.p90Ms && r.non2xx === 0 && r.errors === 0, `repository ${s!.label} ${name}: ${figure(r.rps, r.p90)} (target ≥ ${TARGETS.rps} req/s, p90 < ${TARGETS.p90Ms} ms, all 2xx)`)}`);
    }
    const ratio = small && big ? big.reads[e]!.rps / Math.max(1e-9, small.reads[e]!.rps) : NaN;
    cells.push(Number.isNaN(ratio) ? '—' : ratio.toFixed(2));
    if (!Number.isNaN(ratio)) checks.push(`ratio ${verdict(ratio >= TARGETS.sameWithin, `repository ${name}: full/tenth ${ratio.toFixed(2)} (target ≥ ${TARGETS.sameWithin})`)}`);
    rows.push([...cells, checks.join(', ')]);
  }
  {
    const cells = ['compare of 100 commits, alone (1 connection)'];
    const checks: string[] = [];
    for (const s of [small, big]) {
      const c = s?.compare;
      cells.push(c ? `${c.commits} commits: p50 ${c.p50.toFixed(1)}, p90 ${c.p90.toFixed(1)} ms` : '—');
      if (c) checks.push(`${s!.label} ${verdict(c.p90 < TARGETS.compareP90Ms && c.non2xx === 0, `repository ${s!.label} compare: p90 ${c.p90} ms (target < ${TARGETS.compareP90Ms} ms)`)}`);
    }
    const ratio = small && big ? small.compare.p90 / Math.max(1e-9, big.compare.p90) : NaN;
    cells.push(Number.isNaN(ratio) ? '—' : `${ratio.toFixed(2)} (p90 tenth/full)`);
    if (!Number.isNaN(ratio)) checks.push(`ratio ${verdict(ratio >= TARGETS.sameWithin, `repository compare: p90 tenth/full ${ratio.toFixed(2)} (target ≥ ${TARGETS.sameWithin})`)}`);
    rows.push([...cells, checks.join(', ')]);
  }
  {
    const cells = [`merge request creation, ${REPO_MR_CLIENTS} clients`];
    const checks: string[] = [];
    for (const s of [small, big]) {
      const c = s?.creation;
      cells.push(c ? figure(c.perSecond, c.p90) + (c.non2xx ? ` (${c.non2xx} refused)` : '') : '—');
      if (c) checks.push(`${s!.label} ${verdict(c.perSecond >= TARGETS.creationPerSecond && c.non2xx === 0, `repository ${s!.label} merge request creation: ${c.perSecond}/s (target ≥ ${TARGETS.creationPerSecond}/s)`)}`);
    }
    const ratio = small && big ? big.creation.perSecond / Math.max(1e-9, small.creation.perSecond) : NaN;
    cells.push(Number.isNaN(ratio) ? '—' : ratio.toFixed(2));
    if (!Number.isNaN(ratio)) checks.push(`ratio ${verdict(ratio >= TARGETS.sameWithin, `repository merge request creation: full/tenth ${ratio.toFixed(2)} (target ≥ ${TARGETS.sameWithin})`)}`);
    rows.push([...cells, checks.join(', ')]);
  }
  const header = ['scenario', ...[small, big].map((s) => (s ? `${s.label}: ${s.commits} commits, ${s.branches} branches, ${s.mergeRequests} MRs` : '—')), 'full/tenth', 'target'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  const seeds = f.sizes.map(
    (s) =>
      `  ${s.label}: history written by git fast-import in ${s.seed.generateSeconds} s, pushed over smart HTTP in ${s.seed.pushes} pushes in ${s.seed.pushSeconds} s (${s.seed.objects} objects, ${s.seed.packMb} MiB packed: ${round(s.seed.objects / Math.max(1e-9, s.seed.pushSeconds))} objects/s); ${s.mergeRequests} merge requests in ${s.seed.mergeRequestSeconds} s`,
  );
  const cpu = f.sizes.flatMap((s) => s.reads.map((r) => `${s.label} ${r.name}: cpu ${Object.entries(r.cpu).map(([k, v]) => `${k} ${v}`).join(', ')}; rounds ${r.rpsByRound.join('/')} req/s`));
  return {
    lines: [
      '',
      `Repository reads (issue 23 §4; bench/README.md, "Repository") — forgelog as \`npm start\` runs it, as root, ${f.settings.connections} connections, ${f.settings.rounds} rounds of ${f.settings.sliceSeconds} s; targets ≥ ${TARGETS.rps} req/s with p90 < ${TARGETS.p90Ms} ms, compare p90 < ${TARGETS.compareP90Ms} ms, creation ≥ ${TARGETS.creationPerSecond}/s, full ≥ ${TARGETS.sameWithin} of tenth`,
      line(header),
      line(header.map((_, i) => '-'.repeat(widths[i]!))),
      ...rows.map(line),
      ...seeds,
      ...cpu.map((c) => `  ${c}`),
      `  forgelog peak RSS ${f.memory.peakMb} MB`,
    ],
    missed,
  };
}

export const repositoryJson = (f: RepositoryFigures) => ({ ...f, targets: TARGETS });
