/** The black-box figures beside their targets (bench/README.md, "The figures"), and which targets were missed. */
import { round } from '../harness/meters.js';
import { GPT_DEFAULT_TTFB, GPT_RPS, GPT_RPS_SHARE, GPT_SUCCESS, GPT_VERSION, GROUP_MR_SHARE, PROJECTS_PER_SECOND_TARGET, RSS_TARGET_MB, gptP90Limit, gptWeight } from './endpoints.js';
import type { ExplainFigure } from './explain.js';
import type { BlackboxFigures, PairFigure, SideFigure } from './measure.js';

/** GPT's reference architectures by their requests/s (k6/config/environments, options). */
const ARCHITECTURES = [
  ['50k', 1000],
  ['25k', 500],
  ['10k', 200],
  ['5k', 100],
  ['3k', 60],
  ['2k', 40],
  ['1k', 20],
] as const;

export function align(rows: string[][], right: (column: number) => boolean = (c) => c > 0): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((cell, i) => (right(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd());
}

const success = (s: SideFigure) => (s.requests + s.errors > 0 ? (s.requests - s.non2xx) / (s.requests + s.errors) : 0);
const verdict = (ok: boolean) => (ok ? 'ok' : 'MISSED');
const cpuNote = (c: Record<string, number>) => `cpu fl/bare/gen/pg/other ${c.forgelog}/${c.bare}/${c.loadgen}/${c.postgres}/${c.other}`;

/** GPT's three criteria at `rps` requests/s of the reference architecture. */
function gptPasses(p: PairFigure, rps: number): boolean {
  const g = p.endpoint.gpt!;
  return p.forgelog.rps >= rps * gptWeight(g) * GPT_RPS_SHARE && p.forgelog.p90 < gptP90Limit(g) && success(p.forgelog) >= GPT_SUCCESS;
}

export function blackboxReport(f: BlackboxFigures, explain: ExplainFigure[] | undefined): { lines: string[]; missed: string[] } {
  const missed: string[] = [];
  const projectMrs = f.pairs.find((p) => p.endpoint.name === 'GET /projects/:id/merge_requests');
  const header = ['endpoint', 'forgelog/s', 'p90 ms', 'bare/s', 'bare p90', 'ratio', 'min–max', 'target', '', 'GPT 50k: need/s', 'p90 <', '2xx %', 'GPT', 'reaches', 'notes'];
  const rows: string[][] = [header];
  let gptJudged = 0;
  let gptPassed = 0;
  let repoJudged = 0;
  let repoPassed = 0;
  for (const p of f.pairs) {
    const e = p.endpoint;
    let target = '';
    let ratioVerdict = '';
    if (e.ratioTarget !== undefined) {
      target = `>= ${e.ratioTarget}`;
      ratioVerdict = verdict(p.ratio >= e.ratioTarget);
      if (p.ratio < e.ratioTarget) missed.push(`${e.name}: ${p.ratio} of bare (target ${e.ratioTarget})`);
    } else if (e.name === 'GET /groups/:id/merge_requests' && projectMrs) {
      const need = round(projectMrs.ratio * GROUP_MR_SHARE, 3);
      target = `>= ${need} (${GROUP_MR_SHARE}×proj.)`;
      ratioVerdict = verdict(p.ratio >= need);
      if (p.ratio < need) missed.push(`${e.name}: ${p.ratio} of bare, slower than the project list's ${projectMrs.ratio} (target ${GROUP_MR_SHARE}× it)`);
    }
    const ok2xx = success(p.forgelog);
    let gpt = ['', '', '', '']; // need/s, p90 limit, verdict, reaches
    if (e.gpt) {
      const need = GPT_RPS * gptWeight(e.gpt) * GPT_RPS_SHARE;
      const passes = gptPasses(p, GPT_RPS);
      const reaches = ARCHITECTURES.find(([, rps]) => gptPasses(p, rps))?.[0] ?? 'none';
      const repo = e.gpt.repository === true;
      gpt = [String(round(need)), String(gptP90Limit(e.gpt)), repo ? `${passes ? 'ok' : 'missed'} (repo)` : verdict(passes), reaches];
      if (repo) {
        repoJudged++;
        if (passes) repoPassed++;
      } else {
        gptJudged++;
        if (passes) gptPassed++;
        else missed.push(`${e.name}: GPT at 50k (${p.forgelog.rps} req/s of ${round(need)}, p90 ${p.forgelog.p90} ms of ${gptP90Limit(e.gpt)}, ${round(ok2xx * 100, 2)}% 2xx)`);
      }
    } else {
      if (ok2xx < GPT_SUCCESS) missed.push(`${e.name}: ${round(ok2xx * 100, 2)}% 2xx`);
    }
    const notes = [
      `bare: ${p.endpoint.bare}`,
      p.forgelog.non2xx ? `NON-2XX ${JSON.stringify(p.forgelog.statusCodes)}` : '',
      p.forgelog.errors ? `ERRORS ${p.forgelog.errors}` : '',
      p.forgelog.requests === 0 ? `NOTHING ANSWERED within the ${f.settings.sliceSeconds} s slices` : '',
      p.bare.non2xx || p.bare.errors ? `BARE FAILED ${JSON.stringify(p.bare.statusCodes)} errors ${p.bare.errors}` : '',
      cpuNote(p.forgelog.cpu),
    ].filter(Boolean);
    rows.push([
      e.name,
      String(p.forgelog.rps),
      p.forgelog.requests > 0 ? p.forgelog.p90.toFixed(0) : '—',
      String(p.bare.rps),
      p.bare.requests > 0 ? p.bare.p90.toFixed(0) : '—',
      p.ratio.toFixed(2),
      `${p.ratioMin.toFixed(2)}–${p.ratioMax.toFixed(2)}`,
      target,
      ratioVerdict,
      gpt[0]!,
      gpt[1]!,
      round(ok2xx * 100, 2).toFixed(2),
      gpt[2]!,
      gpt[3]!,
      notes.join(', '),
    ]);
  }
  const lines = [
    `Black-box — forgelog (\`node bin/forgelog.js serve\`, pid of its own) vs the bare server (hono + pg, pool ${f.settings.barePool}) on the same PostgreSQL database; autocannon in a third process;`,
    `  ${f.settings.connections} connections; ${f.settings.rounds} rounds, in each the two sides of a pair adjacent, ${f.settings.sliceSeconds} s each; req/s = median over rounds, ratio = median of the rounds' forgelog/bare (min–max), p90 over all rounds`,
    `  GPT: ${GPT_RPS} req/s × the test's weight × ${GPT_RPS_SHARE} sustained, p90 under its limit (default ${GPT_DEFAULT_TTFB} ms; autocannon's p90 is the whole response, GPT's the time to first byte), >= ${GPT_SUCCESS * 100}% 2xx; thresholds for GitLab ${GPT_VERSION}; "reaches": the largest reference architecture whose criteria hold`,
    ...align(rows, (c) => c > 0 && c !== 7 && c !== 8 && c !== 12 && c !== 14),
    `  GPT at 50k: ${gptPassed} of ${gptJudged} pass (repository reads, the repository issue's, shown not counted: ${repoPassed} of ${repoJudged})`,
  ];
  const c = f.create;
  const createOk = c.rps >= PROJECTS_PER_SECOND_TARGET && c.non2xx === 0;
  if (!createOk) missed.push(`project creation: ${c.rps}/s (target ${PROJECTS_PER_SECOND_TARGET}/s)${c.non2xx ? `, non-2xx ${JSON.stringify(c.statusCodes)}` : ''}`);
  lines.push(
    `  POST /projects, ${f.settings.createClients} clients, ${f.settings.createSeconds} s: ${c.rps} projects/s, p90 ${c.p90} ms (target >= ${PROJECTS_PER_SECOND_TARGET}/s: ${verdict(createOk)})${c.non2xx ? `, NON-2XX ${JSON.stringify(c.statusCodes)}` : ''}, ${cpuNote(c.cpu)}`,
  );
  const m = f.memory;
  const rssOk = m.peakMb <= RSS_TARGET_MB;
  if (!rssOk) missed.push(`forgelog RSS: peak ${m.peakMb} MB (target ${RSS_TARGET_MB} MB)`);
  lines.push(`  forgelog RSS: peak (VmHWM, seed included) ${m.peakMb} MB (target <= ${RSS_TARGET_MB}: ${verdict(rssOk)}); after the seed ${m.seedPeakMb} MB; highest VmRSS sampled under the measured load ${m.rssMaxMb} MB; at the end ${m.rssEndMb} MB`);
  const idleOk = f.idle.transactions === 0;
  if (!idleOk) missed.push(`idle: ${f.idle.perSecond} transactions/s (target 0)`);
  lines.push(`  idle: ${f.idle.transactions} transactions on forgelog's database in ${f.idle.seconds} s = ${f.idle.perSecond}/s (pg_stat_database xact_commit + xact_rollback; target 0: ${verdict(idleOk)})`);
  const d = f.data.counts;
  lines.push(
    `  data (through the API as root, ${f.seedSeconds} s: ${Object.entries(f.data.seconds).map(([k, v]) => `${k} ${v} s`).join(', ')}): ${d.users} users, ${d.groups} groups, ${d.projects} projects, ${d.mergeRequests} merge requests (${d.mergedMergeRequests} merged), ${d.commits} commits, ${d.branches} branches`,
  );
  if (explain) {
    lines.push('', 'Explain — the same endpoints served in this process (openRuntime + createApp) on the same data, to count per request:');
    lines.push(...align([['endpoint', 'stmts/req', 'µs node cpu/req', 'req/s', 'p50 ms', ''], ...explain.map((x) => [x.name, String(x.statementsPerRequest ?? '—'), String(x.cpuMicrosPerRequest), String(x.rps), x.p50.toFixed(1), x.non2xx ? `NON-2XX ${x.non2xx}` : ''])]).map((l) => `  ${l}`));
  }
  return { lines, missed };
}
