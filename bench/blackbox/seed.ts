/**
 * The black-box data set (bench/README.md, "Data set"), made through the API as root, the way
 * a client would: users with tokens, a forest of groups holding the projects, a user who is a
 * member of a single group, and one project with a repository (commits, branches) and its
 * merge requests, some merged. Nothing is cached between runs.
 */
import { log, round } from '../harness/meters.js';
import { inParallel } from '../harness/setup.js';
import { BRANCH_COUNT, COMMIT_COUNT, CONNECTIONS, GROUP_COUNT, MR_COUNT, PROJECT_COUNT, SEED_CLIENTS, USER_COUNT } from '../harness/settings.js';

export interface SeededData {
  rootToken: string;
  /** Users with a token, one per connection (connection i is user i). */
  users: { id: number; token: string }[];
  /** The user who is a member (developer) of `group` only. */
  member: { id: number; token: string };
  /** The measured group: a top-level group with a full page of its own projects, subgroups below it, and the merge request project. */
  group: { id: number };
  mrProject: { id: number };
  /** An open merge request whose source branch has a commit of its own. */
  mrIid: number;
  /** A commit of master, halfway down its history. */
  commitSha: string;
  /** A commit of master 50 commits back: compared with master. */
  compareFrom: string;
  /** Projects the environments are created in (connection i uses project i). */
  environmentProjects: number[];
  counts: Record<string, number>;
  seconds: Record<string, number>;
}

interface MergeRequestData {
  group: { id: number };
  mrProject: { id: number };
  mrIid: number;
  masterShas: string[];
  merged: number;
}

class Api {
  constructor(
    private readonly base: string,
    private readonly token: string,
  ) {}
  async call<T = Record<string, unknown>>(method: string, path: string, body?: unknown, token = this.token): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(`${this.base}/api/v4${path}`, {
        method,
        headers: { 'PRIVATE-TOKEN': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (response.ok) return JSON.parse(text) as T;
      // A concurrency conflict the server gave up retrying: try again, as a client would.
      if (response.status === 409 && /conflict|concurren/i.test(text) && attempt < 5) continue;
      throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 500)}`);
    }
  }
}

async function timed<T>(seconds: Record<string, number>, label: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  const result = await fn();
  seconds[label] = round((performance.now() - started) / 1000, 1);
  log(`  seed: ${label} in ${seconds[label]} s`);
  return result;
}

export async function seed(base: string, rootToken: string): Promise<SeededData> {
  const api = new Api(base, rootToken);
  const seconds: Record<string, number> = {};
  const stamp = Date.now().toString(36);
  const par = SEED_CLIENTS;
  const rootId = (await api.call<{ id: number }>('GET', '/user')).id;

  // Users, with a token for each connection's user and for the member.
  const users = await timed(seconds, `${USER_COUNT} users`, async () => {
    const made: { id: number; token: string }[] = [];
    await inParallel(
      Array.from({ length: USER_COUNT }, (_, i) => i),
      par,
      async (i) => {
        const username = `bench_${stamp}_${i}`;
        const user = await api.call<{ id: number }>('POST', '/users', { email: `${username}@example.com`, username, name: `Bench ${i}`, password: 'benchmark-password', skip_confirmation: true });
        const token = i <= CONNECTIONS ? (await api.call<{ token: string }>('POST', `/users/${user.id}/personal_access_tokens`, { name: 'bench', scopes: ['api'] })).token : '';
        made[i] = { id: user.id, token };
      },
    );
    return made;
  });
  const member = users[CONNECTIONS % USER_COUNT]!;
  const tokenUsers = users.slice(0, Math.min(CONNECTIONS, USER_COUNT));

  // Two tracks at once: the merge requests of one project are created one after another
  // (each takes the project's iid), so they run beside the groups and projects.
  let mergeRequestsDone: Promise<MergeRequestData> | undefined;
  const startMergeRequests = () => {
    mergeRequestsDone = mergeRequestProject();
    mergeRequestsDone.catch(() => {}); // awaited below
  };

  // Groups: a forest owned by root. Top-level groups (1 in 100), each with 9 children, the
  // rest below those children: three levels, as an organisation's groups, teams and projects.
  const tops = Math.max(1, Math.round(GROUP_COUNT / 100));
  const secondLevel = Math.min(GROUP_COUNT - tops, tops * 9);
  const thirdLevel = GROUP_COUNT - tops - secondLevel;
  const groupIds: number[] = [];
  await timed(seconds, `${GROUP_COUNT} groups`, async () => {
    const create = (from: number, count: number, parent: (k: number) => number | undefined) =>
      inParallel(
        Array.from({ length: count }, (_, k) => k),
        par,
        async (k) => {
          const i = from + k;
          const parentId = parent(k);
          const group = await api.call<{ id: number }>('POST', '/groups', { name: `bench ${stamp} g${i}`, path: `bench-${stamp}-g${i}`, ...(parentId === undefined ? {} : { parent_id: parentId }) });
          groupIds[i] = group.id;
        },
      );
    await create(0, tops, () => undefined);
    startMergeRequests();
    await create(tops, secondLevel, (k) => groupIds[k % tops]);
    await create(tops + secondLevel, thirdLevel, (k) => groupIds[tops + (k % secondLevel)]);
  });
  await api.call('POST', `/groups/${groupIds[0]!}/members`, { user_id: member.id, access_level: 30 });

  // Projects: a full page and more (up to 50) directly in each top-level group, the rest spread over the subgroups.
  const perTop = Math.min(50, Math.floor(PROJECT_COUNT / (2 * tops)));
  const namespaces = Array.from({ length: PROJECT_COUNT }, (_, i) => (i < perTop * tops ? groupIds[i % tops]! : groupIds[secondLevel + thirdLevel > 0 ? tops + (i % (secondLevel + thirdLevel)) : i % tops]!));
  const projectIds: number[] = [];
  await timed(seconds, `${PROJECT_COUNT} projects`, () =>
    inParallel(namespaces, par, async (namespaceId, i) => {
      const project = await api.call<{ id: number }>('POST', '/projects', { name: `p${i}`, path: `p${i}`, namespace_id: namespaceId });
      projectIds[i] = project.id;
    }),
  );

  const mr = await mergeRequestsDone!;

  async function mergeRequestProject(): Promise<MergeRequestData> {
    // The merge request project: a repository of COMMIT_COUNT commits (its README, then master's
    // history, then one commit on each feature branch) and BRANCH_COUNT branches besides master.
    const group = { id: groupIds[0]! };
    const mrProject = await api.call<{ id: number }>('POST', '/projects', { name: 'merge requests', path: 'merge-requests', namespace_id: group.id, initialize_with_readme: true });
    const p = `/projects/${mrProject.id}`;
    const features = Math.max(1, BRANCH_COUNT - 1);
    const masterCommits = Math.max(1, COMMIT_COUNT - 1 - features);
    const masterShas: string[] = [];
    await timed(seconds, `${masterCommits} commits on master`, async () => {
      for (let k = 0; k < masterCommits; k++) {
        const commit = await api.call<{ id: string }>('POST', `${p}/repository/commits`, {
          branch: 'master',
          commit_message: `Change ${k}\n\nA line of history.`,
          actions: [{ action: 'create', file_path: `d${k % 10}/f${k}.txt`, content: `file ${k}\n${'content line\n'.repeat(1 + (k % 20))}` }],
        });
        masterShas.push(commit.id);
      }
    });
    await timed(seconds, `${features} feature branches + sink, a commit on each feature`, async () => {
      await api.call('POST', `${p}/repository/branches`, { branch: 'sink', ref: 'master' });
      await inParallel(
        Array.from({ length: features }, (_, i) => i),
        par,
        async (i) => {
          await api.call('POST', `${p}/repository/branches`, { branch: `feature-${i}`, ref: 'master' });
          await api.call('POST', `${p}/repository/commits`, {
            branch: `feature-${i}`,
            commit_message: `Feature ${i}`,
            actions: [
              { action: 'create', file_path: `features/feature-${i}.txt`, content: `feature ${i}\n` },
              { action: 'update', file_path: `d${i % 10}/f${i % masterCommits}.txt`, content: `file ${i % masterCommits}, changed by feature ${i}\n` },
            ],
          });
        },
      );
    });

    // Merge requests: some merged (feature-i into sink, one each, so no open one's target moves),
    // the rest open, each a distinct (source, target) pair: feature-i into master, then into other features.
    const merged = Math.min(features, Math.round(MR_COUNT * 0.05));
    const open = MR_COUNT - merged;
    let mrIid = 0;
    await timed(seconds, `${merged} merged merge requests`, async () => {
      for (let i = 0; i < merged; i++) {
        const mr = await api.call<{ iid: number }>('POST', `${p}/merge_requests`, { title: `Merge feature ${i}`, source_branch: `feature-${i}`, target_branch: 'sink', assignee_id: rootId });
        await api.call('PUT', `${p}/merge_requests/${mr.iid}/merge`, {});
      }
    });
    await timed(seconds, `${open} open merge requests`, () =>
      inParallel(
        Array.from({ length: open }, (_, n) => n),
        par,
        async (n) => {
          const source = n % features;
          const k = Math.floor(n / features);
          if (k >= features) throw new Error(`BENCH_MRS=${MR_COUNT} needs more branches (BENCH_BRANCHES)`);
          const target = k === 0 ? 'master' : `feature-${(source + k) % features}`;
          const mr = await api.call<{ iid: number }>('POST', `${p}/merge_requests`, { title: `Feature ${source} into ${target}`, description: `Merges feature ${source}.`, source_branch: `feature-${source}`, target_branch: target, assignee_id: rootId });
          if (n === 0) mrIid = mr.iid;
        },
      ),
    );

    return { group, mrProject, mrIid, masterShas, merged };
  }

  return {
    rootToken,
    users: tokenUsers,
    member,
    group: mr.group,
    mrProject: mr.mrProject,
    mrIid: mr.mrIid,
    commitSha: mr.masterShas[Math.floor(mr.masterShas.length / 2)]!,
    compareFrom: mr.masterShas[Math.max(0, mr.masterShas.length - 51)]!,
    environmentProjects: projectIds.slice(0, Math.min(CONNECTIONS, projectIds.length)),
    counts: { users: USER_COUNT, groups: GROUP_COUNT, projects: PROJECT_COUNT + 1, mergeRequests: MR_COUNT, mergedMergeRequests: mr.merged, commits: COMMIT_COUNT, branches: BRANCH_COUNT },
    seconds,
  };
}
