/**
 * What the black-box phase requests, and what each figure is held to: the GitLab Performance
 * Tool's API tests (bench/README.md, "Endpoints"), the issue's ratios to a bare route, and
 * GPT's per-test weight and p90 limit.
 */
import type { LoadJob } from '../loadgen.js';
import type { SeededData } from './seed.js';

/** The bare route a request is compared with (bench/bare-server.ts). */
export type BareKind = 'row' | 'page' | 'mrPage' | 'insert';

/**
 * GPT's thresholds of one test as its k6 file declares them (`export let thresholds = { 'rps':
 * {…}, 'ttfb': {…} }`, keyed by GitLab version), from gitlab-org/quality/performance
 * k6/tests/api/*.js. Absent: GPT's defaults (weight 1, TTFB_THRESHOLD 200 ms).
 */
interface GptThresholds {
  test: string;
  rps?: Record<string, number>;
  ttfb?: Record<string, number>;
  /** Repository reads are judged in the repository issue, not here: shown, not counted. */
  repository?: boolean;
}

export interface Endpoint {
  name: string;
  bare: BareKind;
  /** Target on forgelog/bare (same round), e.g. 0.6. */
  ratioTarget?: number;
  gpt?: GptThresholds;
  /** Requests of connection i (i modulo their count). */
  requests: LoadJob['requests'];
  /** Writes carry `[<id>]` in their bodies (a fresh id per request). */
  idReplacement?: boolean;
}

// ─────────────── GPT's criteria (run_k6.rb, gpt_k6_modules.js) ───────────────

/** Requests/s of the 50k reference architecture (k6/config/options/60s_1000rps.json: 1,000). */
export const GPT_RPS = 1000;
/** RPS_THRESHOLD_MULTIPLIER: a test passes at ≥ 80 % of its rate. */
export const GPT_RPS_SHARE = 0.8;
/** SUCCESS_RATE_THRESHOLD. */
export const GPT_SUCCESS = 0.99;
/** TTFB_THRESHOLD when a test declares none (ms). */
export const GPT_DEFAULT_TTFB = 200;
/** GitLab version the thresholds are taken for (BENCH_GPT_VERSION); `latest`: today's. */
export const GPT_VERSION = process.env.BENCH_GPT_VERSION || 'latest';

const versionBelow = (a: string, b: string) => {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  return false;
};

/**
 * gpt_k6_modules.js getCurrentVersionThreshold: the first listed version above the
 * environment's applies; past all of them, `latest`, else the default.
 */
function thresholdFor(fallback: number, byVersion: Record<string, number> | undefined): number {
  if (!byVersion) return fallback;
  for (const [version, value] of Object.entries(byVersion)) {
    if (version === 'latest') continue;
    if (GPT_VERSION !== 'latest' && !versionBelow(version, GPT_VERSION)) return value;
  }
  return byVersion.latest ?? fallback;
}

export const gptWeight = (g: GptThresholds) => thresholdFor(1, g.rps);
export const gptP90Limit = (g: GptThresholds) => thresholdFor(GPT_DEFAULT_TTFB, g.ttfb);

// The thresholds as the k6 files declare them (GPT v2, gitlab-org/quality/performance as mirrored
// in kr1ptonec/gitlab_perfomance at 2c3009a, 2021-07).
const GPT = {
  groups: { test: 'api_v4_groups' },
  group: { test: 'api_v4_groups_group', rps: { latest: 0.1 }, ttfb: { latest: 7500 } },
  subgroups: { test: 'api_v4_groups_group_subgroups' },
  groupProjects: { test: 'api_v4_groups_projects', rps: { latest: 0.5 }, ttfb: { latest: 3500 } },
  groupMergeRequests: { test: 'api_v4_groups_merge_requests', rps: { latest: 0.3 }, ttfb: { latest: 3500 } },
  projects: { test: 'api_v4_projects', rps: { latest: 0.15 }, ttfb: { latest: 7000 } },
  project: { test: 'api_v4_projects_project' },
  deployKeys: { test: 'api_v4_projects_deploy_keys' },
  mergeRequests: { test: 'api_v4_projects_merge_requests', rps: { '13.1.0': 0.2, '13.4.0': 0.4, '14.0.0': 0.6 }, ttfb: { '13.1.0': 5000, '13.4.0': 2000, '14.0.0': 1000, latest: 400 } },
  mergeRequest: { test: 'api_v4_projects_merge_requests_merge_request', rps: { latest: 0.5 }, ttfb: { latest: 2750 } },
  changes: { test: 'api_v4_projects_merge_requests_merge_request_changes', rps: { '13.6.0': 0.1, latest: 0.5 }, ttfb: { '13.6.0': 12000, latest: 3500 } },
  mrCommits: { test: 'api_v4_projects_merge_requests_merge_request_commits', rps: { '12.5.0': 0.1 }, ttfb: { '12.5.0': 10000 } },
  services: { test: 'api_v4_projects_project_services' },
  branches: { test: 'api_v4_projects_repository_branches', rps: { '12.8.0': 0.2, '13.8.0': 0.4 }, ttfb: { '12.8.0': 7500, '13.8.0': 3500 }, repository: true },
  commits: { test: 'api_v4_projects_repository_commits', repository: true },
  commit: { test: 'api_v4_projects_repository_commits_commit', repository: true },
  compare: { test: 'api_v4_projects_repository_compare', rps: { '14.1.0': 0.1 }, ttfb: { '14.1.0': 8000 }, repository: true },
  file: { test: 'api_v4_projects_repository_files_file', repository: true },
  tree: { test: 'api_v4_projects_repository_tree', repository: true },
  user: { test: 'api_v4_user' },
  users: { test: 'api_v4_users' },
} satisfies Record<string, GptThresholds>;

// ─────────────── The endpoints ───────────────

const get = (path: string, token: string) => ({ method: 'GET', path: `/api/v4${path}`, headers: { 'PRIVATE-TOKEN': token } });
const json = { 'content-type': 'application/json' };

/** Every black-box endpoint over the seeded data, in the order they run. */
export function endpoints(d: SeededData): Endpoint[] {
  const root = d.rootToken;
  const asRoot = (path: string) => [get(path, root)];
  const p = `/projects/${d.mrProject.id}`;
  const mr = `${p}/merge_requests/${d.mrIid}`;
  return [
    { name: 'GET /users/:id', bare: 'row', ratioTarget: 0.6, requests: d.users.map((u) => get(`/users/${u.id}`, u.token)) },
    { name: 'GET /user', bare: 'row', ratioTarget: 0.6, gpt: GPT.user, requests: d.users.map((u) => get('/user', u.token)) },
    { name: 'GET /users', bare: 'page', gpt: GPT.users, requests: asRoot('/users') },
    { name: 'GET /groups', bare: 'page', ratioTarget: 0.6, gpt: GPT.groups, requests: asRoot('/groups?per_page=20') },
    { name: 'GET /groups/:id', bare: 'row', gpt: GPT.group, requests: asRoot(`/groups/${d.group.id}`) },
    { name: 'GET /groups/:id/subgroups', bare: 'page', gpt: GPT.subgroups, requests: asRoot(`/groups/${d.group.id}/subgroups`) },
    { name: 'GET /groups/:id/projects (root)', bare: 'page', ratioTarget: 0.4, gpt: GPT.groupProjects, requests: asRoot(`/groups/${d.group.id}/projects`) },
    { name: 'GET /groups/:id/projects (member)', bare: 'page', ratioTarget: 0.4, gpt: GPT.groupProjects, requests: [get(`/groups/${d.group.id}/projects`, d.member.token)] },
    { name: 'GET /groups/:id/merge_requests', bare: 'mrPage', gpt: GPT.groupMergeRequests, requests: asRoot(`/groups/${d.group.id}/merge_requests`) },
    { name: 'GET /projects', bare: 'page', gpt: GPT.projects, requests: asRoot('/projects?order_by=id&sort=asc') },
    { name: 'GET /projects/:id', bare: 'row', gpt: GPT.project, requests: asRoot(p) },
    { name: 'GET /projects/:id/deploy_keys', bare: 'page', gpt: GPT.deployKeys, requests: asRoot(`${p}/deploy_keys`) },
    { name: 'GET /projects/:id/merge_requests', bare: 'mrPage', ratioTarget: 0.5, gpt: GPT.mergeRequests, requests: asRoot(`${p}/merge_requests`) },
    { name: 'GET /projects/:id/merge_requests/:iid', bare: 'row', gpt: GPT.mergeRequest, requests: asRoot(mr) },
    { name: 'GET …/merge_requests/:iid/changes', bare: 'row', gpt: GPT.changes, requests: asRoot(`${mr}/changes`) },
    { name: 'GET …/merge_requests/:iid/commits', bare: 'row', gpt: GPT.mrCommits, requests: asRoot(`${mr}/commits`) },
    { name: 'GET /projects/:id/services', bare: 'page', gpt: GPT.services, requests: asRoot(`${p}/services`) },
    { name: 'GET …/repository/branches', bare: 'page', gpt: GPT.branches, requests: asRoot(`${p}/repository/branches`) },
    { name: 'GET …/repository/commits', bare: 'page', gpt: GPT.commits, requests: asRoot(`${p}/repository/commits`) },
    { name: 'GET …/repository/commits/:sha', bare: 'row', gpt: GPT.commit, requests: asRoot(`${p}/repository/commits/${d.commitSha}`) },
    { name: 'GET …/repository/compare', bare: 'page', gpt: GPT.compare, requests: asRoot(`${p}/repository/compare?from=${d.compareFrom}&to=master`) },
    { name: 'GET …/repository/files/:path', bare: 'row', gpt: GPT.file, requests: asRoot(`${p}/repository/files/README.md?ref=master`) },
    { name: 'GET …/repository/tree', bare: 'page', gpt: GPT.tree, requests: asRoot(`${p}/repository/tree`) },
    {
      name: 'PUT /user/status',
      bare: 'insert',
      ratioTarget: 0.5,
      idReplacement: true,
      requests: d.users.map((u) => ({ method: 'PUT', path: '/api/v4/user/status', headers: { ...json, 'PRIVATE-TOKEN': u.token }, body: JSON.stringify({ emoji: 'coffee', message: 'benchmarking [<id>]' }) })),
    },
    {
      name: 'POST /projects/:id/environments',
      bare: 'insert',
      ratioTarget: 0.5,
      idReplacement: true,
      requests: d.environmentProjects.map((id) => ({ method: 'POST', path: `/api/v4/projects/${id}/environments`, headers: { ...json, 'PRIVATE-TOKEN': root }, body: JSON.stringify({ name: 'env-[<id>]' }) })),
    },
  ];
}

/** The bare route's requests for an endpoint (connection i reads user i's row where the endpoint is per user). */
export function bareRequests(d: SeededData, kind: BareKind): LoadJob['requests'] {
  switch (kind) {
    case 'row':
      return d.users.map((u) => ({ method: 'GET', path: `/row/${u.id}` }));
    case 'page':
      return [{ method: 'GET', path: `/page/${d.group.id}` }];
    case 'mrPage':
      return [{ method: 'GET', path: `/merge_requests/${d.mrProject.id}` }];
    case 'insert':
      return [{ method: 'POST', path: '/insert', headers: json, body: JSON.stringify({ emoji: 'coffee', message: 'benchmarking [<id>]' }) }];
  }
}

/** The group merge request list is held to the project list's pace (issue 22: "as fast as"), within this share. */
export const GROUP_MR_SHARE = 0.9;
export const PROJECTS_PER_SECOND_TARGET = 300;
export const RSS_TARGET_MB = 250;
