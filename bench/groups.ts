/**
 * The data of the group-list scenarios (bench/group-lists.ts, phase `groups`; see bench/README.md):
 * a forest of groups, their projects and memberships, seeded fast but exactly as the app
 * would have them.
 *
 * Every event is made by the real decider from the command the HTTP route would send
 * (CreateGroup, CreateProject, AddMember), so its payload is what a command emits; the
 * events go through appendToStream in big transactions (hash chain, trigger, indexes),
 * the real inline projectors apply them (runInlineProjections with inlineProjectors()),
 * and the uniqueness claims the commands take are inserted too. Ids come from the
 * sequences (namespaces_id_seq, projects_id_seq), moved past them with setval.
 *
 * What is skipped is only what the HTTP path does around that: authentication, reading the
 * stream back and the claims lookup per command, and password hashing for users.
 *
 * No lock waits between the parallel transactions: a GroupCreated locks its parent's row
 * and a ProjectCreated its namespace's row (FOR UPDATE), so groups are appended level by
 * level with all children of one parent in one transaction, and projects with all
 * projects of one group in one transaction.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_GROUP_SETTINGS } from '../src/commands/groups.js';
import { runInlineProjections } from '../src/commands/kernel/append-steps.js';
import type { Db } from '../src/database/database.js';
import { VISIBILITY_LEVEL, type AccessLevel, type Visibility } from '../src/domain/access.js';
import type { ClaimChanges } from '../src/domain/decider.js';
import { groupClaims } from '../src/domain/groups/claims.js';
import { groupDecider, groupStreamId, type GroupCommand } from '../src/domain/groups/decider.js';
import { groupEventIndex } from '../src/domain/groups/events.js';
import type { ParentGroup } from '../src/domain/groups/settings.js';
import { memberEventIndex, membersDecider, membersStreamId, type InheritedMembership, type MemberCommand, type MemberEvent, type MembersState, type MemberSource } from '../src/domain/members.js';
import { projectClaims } from '../src/domain/projects/claims.js';
import { projectDecider, type ProjectCommand } from '../src/domain/projects/decider.js';
import { projectEventIndex, projectStreamId } from '../src/domain/projects/events.js';
import { DEFAULT_PROJECT_SETTINGS, type ProjectSettings } from '../src/domain/projects/settings.js';
import { GENESIS_HASH, appendToStream } from '../src/eventstore/store.js';
import type { EventMetadata, NewEvent } from '../src/eventstore/types.js';
import { inlineProjectors } from '../src/projections/registry.js';
import { inParallel, reserveIds } from './harness/setup.js';

const HERE = dirname(fileURLToPath(import.meta.url));

export interface SeedUser {
  readonly id: number;
  readonly username: string;
}

/** What the forest is made of (every seeding process rebuilds the same forest from it). */
export interface ForestOptions {
  readonly groups: number;
  readonly projects: number;
  /** Users who create the groups (each group's owner) and fill their member lists. */
  readonly users: readonly SeedUser[];
  /** The regular caller of the scenarios: a direct member (developer) of `memberGroups` groups. */
  readonly member: SeedUser;
  readonly memberGroups: number;
}

export interface GroupSeedOptions extends ForestOptions {
  /** Seeding processes, and transactions at once over all of them. */
  readonly workers: number;
  readonly parallel: number;
  readonly log: (line: string) => void;
}

export interface SeedTarget {
  readonly id: number;
  readonly fullPath: string;
  readonly visibility: Visibility;
  /** Groups in the subtree (1 for a group alone). */
  readonly groups: number;
  /** Projects directly in the group / in its whole subtree. */
  readonly directProjects: number;
  readonly subtreeProjects: number;
}

export interface GroupSeed {
  readonly groups: number;
  readonly topLevel: number;
  readonly maxDepth: number;
  readonly projects: number;
  readonly memberships: number;
  readonly memberOf: number;
  readonly events: number;
  readonly workers: number;
  /** CPU time of the seeding processes (they exit before /proc could be read). */
  readonly workersCpuSeconds: number;
  readonly seconds: { groups: number; projects: number; total: number };
  /** A group with ~50–100 projects of its own (GET /groups/:id/projects, include_subgroups=false). */
  readonly group: SeedTarget;
  /** Its top-level group (include_subgroups=true over the subtree). */
  readonly subtree: SeedTarget;
}

// ───────────────────────────── The shape of the data ─────────────────────────────

/** Share of top-level groups; the others hang under a uniformly chosen earlier group. */
const TOP_LEVEL_SHARE = 0.1;
/** Deepest level (0 = top level); GitLab allows 20 ancestors, real trees stay shallow. */
const MAX_DEPTH = 5;
/** Visibilities drawn for groups and projects (then capped by the parent's). */
const drawVisibility = (r: number): Visibility => (r < 0.55 ? 'private' : r < 0.8 ? 'internal' : 'public');
/** Projects per group: log-normal weights (median ≈ half the mean, a long tail of big groups). */
const PROJECT_WEIGHT_SIGMA = 1.2;
/** Members besides the owner: 0–3 per group. */
const EXTRA_MEMBERS = 4;
const TARGET_PROJECTS = 75;

const ADJECTIVES = ['amber', 'brave', 'calm', 'dark', 'eager', 'fair', 'gold', 'happy', 'icy', 'jolly', 'keen', 'lucky', 'merry', 'noble', 'odd', 'proud', 'quick', 'rapid', 'silent', 'tidy', 'urban', 'vivid', 'wild', 'young', 'zesty'];
const NOUNS = ['apps', 'backend', 'core', 'data', 'edge', 'forge', 'gateway', 'infra', 'jobs', 'kernel', 'lab', 'mobile', 'net', 'ops', 'platform', 'query', 'runtime', 'search', 'tools', 'ui', 'vault', 'web', 'xray', 'yard', 'zone'];

/** mulberry32: a small seeded PRNG, so every run seeds the same forest. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const minVisibility = (a: Visibility, b: Visibility): Visibility => (VISIBILITY_LEVEL[a] <= VISIBILITY_LEVEL[b] ? a : b);

interface GroupModel {
  readonly index: number;
  readonly id: number;
  /** Index of the parent, -1 for a top-level group. */
  readonly parent: number;
  readonly depth: number;
  name: string;
  path: string;
  fullPath: string;
  fullName: string;
  traversalIds: number[];
  visibility: Visibility;
  owner: SeedUser;
  projectCount: number;
  /** Direct members: user id → access level. */
  readonly members: Map<number, AccessLevel>;
  /** Member commands after the owner's (extra members, the regular caller). */
  readonly added: { user: SeedUser; level: AccessLevel; inherited: InheritedMembership | null }[];
}

interface ProjectModel {
  readonly id: number;
  readonly group: number;
  readonly name: string;
  readonly path: string;
  readonly visibility: Visibility;
  readonly readme: boolean;
}

function buildForest(options: ForestOptions, firstGroupId: number, firstProjectId: number) {
  const rng = prng(0x5eed_0003);
  const n = options.groups;
  const users = options.users;
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rng() * list.length)]!;
  const topLevel = Math.max(1, Math.round(n * TOP_LEVEL_SHARE));
  const groups: GroupModel[] = [];
  for (let i = 0; i < n; i++) {
    let parent = -1;
    if (i >= topLevel) {
      parent = Math.floor(rng() * i);
      while (groups[parent]!.depth >= MAX_DEPTH) parent = groups[parent]!.parent;
    }
    const id = firstGroupId + i;
    const adjective = pick(ADJECTIVES);
    const noun = pick(NOUNS);
    const up = parent >= 0 ? groups[parent]! : undefined;
    const name = `${adjective[0]!.toUpperCase()}${adjective.slice(1)} ${noun} ${id}`;
    const path = `${adjective}-${noun}-${id}`;
    groups.push({
      index: i,
      id,
      parent,
      depth: up ? up.depth + 1 : 0,
      name,
      path,
      fullPath: up ? `${up.fullPath}/${path}` : path,
      fullName: up ? `${up.fullName} / ${name}` : name,
      traversalIds: up ? [...up.traversalIds, id] : [id],
      visibility: 'private',
      // GitLab adds a group's creator as its owner; a subgroup's creator here is the parent's owner.
      owner: up ? up.owner : pick(users),
      projectCount: 0,
      members: new Map(),
      added: [],
    });
  }

  // Projects per group: log-normal weights, apportioned exactly (largest remainders).
  const weights = groups.map(() => Math.exp(PROJECT_WEIGHT_SIGMA * Math.sqrt(-2 * Math.log(1 - rng())) * Math.cos(2 * Math.PI * rng())));
  const total = weights.reduce((a, b) => a + b, 0);
  const shares = weights.map((w) => (w / total) * options.projects);
  for (const g of groups) g.projectCount = Math.floor(shares[g.index]!);
  const rest = options.projects - groups.reduce((a, g) => a + g.projectCount, 0);
  const byRemainder = groups.map((g) => g.index).sort((a, b) => shares[b]! - Math.floor(shares[b]!) - (shares[a]! - Math.floor(shares[a]!)));
  for (let k = 0; k < rest; k++) groups[byRemainder[k % n]!]!.projectCount++;

  // The targets: a subgroup with ~75 projects of its own (50–100), and its top-level group.
  const closest = (candidates: GroupModel[]) =>
    candidates.reduce<GroupModel | undefined>((best, g) => (!best || Math.abs(g.projectCount - TARGET_PROJECTS) < Math.abs(best.projectCount - TARGET_PROJECTS) ? g : best), undefined);
  const target = closest(groups.filter((g) => g.depth > 0)) ?? closest(groups)!;
  let root = target;
  while (root.parent >= 0) root = groups[root.parent]!;
  const path = new Set(target.traversalIds);
  const inSubtree = (g: GroupModel) => g.traversalIds.includes(root.id);

  // Visibilities top-down (a child never more visible than its parent); the path from the
  // root to the target is internal: the regular caller sees it without being a member, and
  // the target's projects are a mix the visibility filter has to sort out.
  for (const g of groups) {
    const drawn = path.has(g.id) ? 'internal' : drawVisibility(rng());
    g.visibility = g.parent >= 0 ? minVisibility(drawn, groups[g.parent]!.visibility) : drawn;
  }

  // Memberships: the owner; 0–3 other users (not members of an ancestor already, so no
  // inherited role constrains them) at guest…maintainer; the regular caller as developer.
  const levels: AccessLevel[] = [10, 20, 30, 40];
  const ancestorsMember = (g: GroupModel, userId: number) => g.traversalIds.slice(0, -1).some((id) => groups[id - firstGroupId]!.members.has(userId));
  const inheritedOf = (g: GroupModel, userId: number): InheritedMembership | null => {
    let best: InheritedMembership | null = null;
    for (const id of g.traversalIds.slice(0, -1)) {
      const a = groups[id - firstGroupId]!;
      const level = a.members.get(userId);
      if (level !== undefined && (!best || level > best.access_level)) best = { access_level: level, group_name: a.name };
    }
    return best;
  };
  for (const g of groups) {
    g.members.set(g.owner.id, 50);
    const extras = Math.floor(rng() * EXTRA_MEMBERS);
    for (let k = 0; k < extras; k++) {
      const user = pick(users);
      if (g.members.has(user.id) || ancestorsMember(g, user.id)) continue;
      const level = pick(levels);
      g.members.set(user.id, level);
      g.added.push({ user, level, inherited: null });
    }
  }
  // The regular caller: a few hundred groups anywhere but on the path to the target (so the
  // target's private projects stay hidden from it), two of them inside the target's subtree.
  const eligible = groups.filter((g) => !path.has(g.id) && !g.members.has(options.member.id));
  const chosen = new Set<GroupModel>();
  const insideSubtree = eligible.filter(inSubtree);
  for (let k = 0; k < 2 && insideSubtree.length > 0 && chosen.size < options.memberGroups; k++) chosen.add(insideSubtree.splice(Math.floor(rng() * insideSubtree.length), 1)[0]!);
  const pool = eligible.filter((g) => !chosen.has(g));
  while (chosen.size < Math.min(options.memberGroups, eligible.length) && pool.length > 0) chosen.add(pool.splice(Math.floor(rng() * pool.length), 1)[0]!);
  for (const g of [...chosen].sort((a, b) => a.index - b.index)) {
    g.added.push({ user: options.member, level: 30, inherited: inheritedOf(g, options.member.id) });
    g.members.set(options.member.id, 30);
  }

  // Projects, their ids interleaved across groups (as when they are created over time).
  const owners: number[] = [];
  for (const g of groups) for (let k = 0; k < g.projectCount; k++) owners.push(g.index);
  for (let i = owners.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [owners[i], owners[j]] = [owners[j]!, owners[i]!];
  }
  const projects: ProjectModel[] = owners.map((group, i) => {
    const id = firstProjectId + i;
    const adjective = pick(ADJECTIVES);
    const noun = pick(NOUNS);
    return {
      id,
      group,
      name: `${adjective} ${noun} ${id}`,
      path: `${adjective}-${noun}-${id}`,
      visibility: minVisibility(drawVisibility(rng()), groups[group]!.visibility),
      readme: rng() < 0.5,
    };
  });

  const subtreeGroups = groups.filter(inSubtree);
  const toTarget = (g: GroupModel, subtree: GroupModel[]): SeedTarget => ({
    id: g.id,
    fullPath: g.fullPath,
    visibility: g.visibility,
    groups: subtree.length,
    directProjects: g.projectCount,
    subtreeProjects: subtree.reduce((a, s) => a + s.projectCount, 0),
  });
  return {
    groups,
    projects,
    topLevel,
    memberOf: chosen.size,
    group: toTarget(target, groups.filter((g) => g.traversalIds.includes(target.id))),
    subtree: toTarget(root, subtreeGroups),
  };
}

// ───────────────────────────── Appending ─────────────────────────────

/** The metadata an HTTP command carries (writerFor in src/http/kernel/auth.ts), with the seed's actor. */
const metadataOf = (actor: SeedUser): EventMetadata => ({
  actor_id: actor.id,
  actor_username: actor.username,
  sudo_from_id: null,
  impersonation: false,
  token_id: null,
  ip: '127.0.0.1',
  request_id: randomUUID(),
});

interface Batch {
  events: number;
  claims: { kind: string; key: string; stream_id: string }[];
}

/** Decides a command on a new stream, appends its events and runs the inline projectors, as handleCommand does. */
async function appendNew<C, E extends { type: string; data: unknown }, S, K = void>(
  trx: Db,
  batch: Batch,
  stream: {
    streamId: string;
    key?: K;
    decider: { initialState(key: K): S; evolve(s: S, e: E): S; decide(c: C, s: S): readonly E[] };
    commands: readonly C[];
    index: (event: E) => NewEvent['index'];
    claims?: (event: E, before: S) => ClaimChanges;
    metadata: EventMetadata;
  },
) {
  const projectors = inlineProjectors();
  let state = stream.decider.initialState(stream.key as K);
  const events: E[] = [];
  for (const command of stream.commands) {
    for (const event of stream.decider.decide(command, state)) {
      for (const claim of stream.claims?.(event, state).acquire ?? []) batch.claims.push({ kind: claim.kind, key: claim.key, stream_id: stream.streamId });
      state = stream.decider.evolve(state, event);
      events.push(event);
    }
  }
  const stored = await appendToStream(trx, {
    streamId: stream.streamId,
    expectedVersion: 0,
    headHash: GENESIS_HASH,
    events: events.map((event) => ({ type: event.type, data: event.data, index: stream.index(event) })),
    metadata: stream.metadata,
    occurredAt: new Date(),
  });
  await runInlineProjections(trx, projectors, stored);
  batch.events += stored.length;
}

async function insertClaims(trx: Db, claims: Batch['claims']) {
  for (let i = 0; i < claims.length; i += 5000) await trx.insertInto('claims').values(claims.slice(i, i + 5000)).execute();
}

/** Splits items into chunks of about `size`, never splitting a bucket (items sharing a key). */
function chunksByKey<T>(items: readonly T[], key: (item: T) => number, size: number): T[][] {
  const buckets = new Map<number, T[]>();
  for (const item of items) {
    const k = key(item);
    const bucket = buckets.get(k);
    if (bucket) bucket.push(item);
    else buckets.set(k, [item]);
  }
  const chunks: T[][] = [];
  let current: T[] = [];
  for (const bucket of buckets.values()) {
    current.push(...bucket);
    if (current.length >= size) {
      chunks.push(current);
      current = [];
    }
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

const GROUPS_PER_TRANSACTION = 100;
const PROJECTS_PER_TRANSACTION = 500;

/** A part of the seed every process does its share of: the groups of one depth, or the projects. */
export type SeedStep = { readonly kind: 'groups'; readonly depth: number } | { readonly kind: 'projects' };

/** The forest as every seeding process builds it (same options and first ids → same forest). */
export type Forest = ReturnType<typeof buildForest>;
export const planForest = (options: ForestOptions, firstGroupId: number, firstProjectId: number): Forest => buildForest(options, firstGroupId, firstProjectId);

/**
 * Runs this process's share of a step: the step's transactions (chunks) whose index is
 * `worker` modulo `workers`, `parallel` at once. Chunks never share a locked row (all the
 * children of one parent, all the projects of one group), so no transaction waits for another.
 */
export async function runSeedStep(db: Db, forest: Forest, step: SeedStep, share: { worker: number; workers: number; parallel: number }) {
  const { groups, projects } = forest;
  const result = { events: 0, memberships: 0, streams: 0 };
  const mine = <T>(chunks: T[][]) => chunks.filter((_, i) => i % share.workers === share.worker);
  if (step.kind === 'groups') {
    // Each group with its members stream: the owner (committed with the group, as createGroup
    // does), then the others.
    const level = groups.filter((g) => g.depth === step.depth);
    await inParallel(mine(chunksByKey(level, (g) => g.parent, GROUPS_PER_TRANSACTION)), share.parallel, async (chunk) => {
      const batch: Batch = { events: 0, claims: [] };
      let memberships = 0;
      await db.transaction().execute(async (trx) => {
        for (const g of chunk) {
          const parent = g.parent >= 0 ? groups[g.parent]! : undefined;
          const parentGroup: ParentGroup | null = parent
            ? { id: parent.id, visibility: parent.visibility, full_path: parent.fullPath, full_name: parent.fullName, traversal_ids: parent.traversalIds, share_with_group_lock: false }
            : null;
          const metadata = metadataOf(g.owner);
          const create: GroupCommand = { type: 'CreateGroup', settings: { ...DEFAULT_GROUP_SETTINGS, name: g.name, path: g.path, visibility: g.visibility }, parent: parentGroup };
          await appendNew(trx, batch, { streamId: groupStreamId(g.id), key: g.id, decider: groupDecider, commands: [create], index: groupEventIndex, claims: groupClaims, metadata });
          const add = (user: SeedUser, level: AccessLevel, inherited: InheritedMembership | null): MemberCommand => ({
            type: 'AddMember',
            userId: user.id,
            accessLevel: level,
            expiresAt: null,
            actorId: g.owner.id,
            inherited,
          });
          // The owner as createGroup adds it (no inherited role), then the others.
          const commands = [add(g.owner, 50, null), ...g.added.map((a) => add(a.user, a.level, a.inherited))];
          const source: MemberSource = { type: 'Namespace', id: g.id };
          await appendNew<MemberCommand, MemberEvent, MembersState, MemberSource>(trx, batch, {
            streamId: membersStreamId(source),
            key: source,
            decider: membersDecider,
            commands,
            index: memberEventIndex,
            metadata,
          });
          memberships += commands.length;
        }
        await insertClaims(trx, batch.claims);
      });
      result.events += batch.events;
      result.memberships += memberships;
      result.streams += chunk.length;
    });
    return result;
  }
  await inParallel(mine(chunksByKey(projects, (p) => p.group, PROJECTS_PER_TRANSACTION)), share.parallel, async (chunk) => {
    const batch: Batch = { events: 0, claims: [] };
    await db.transaction().execute(async (trx) => {
      for (const p of chunk) {
        const g = groups[p.group]!;
        const settings: ProjectSettings = {
          ...DEFAULT_PROJECT_SETTINGS,
          // createProject: pages are open on a public project, members-only otherwise.
          pages_access_level: p.visibility === 'public' ? 'enabled' : 'private',
          name: p.name,
          path: p.path,
          visibility: p.visibility,
        };
        const create: ProjectCommand = {
          type: 'CreateProject',
          creatorId: g.owner.id,
          namespace: { id: g.id, kind: 'group', visibility: g.visibility, full_path: g.fullPath, full_name: g.fullName, traversal_ids: g.traversalIds },
          settings,
          initializeWithReadme: p.readme,
          defaultBranch: 'master',
          taken: { name: false, path: false },
          personalLimit: null,
        };
        // In a group nobody is added as a member (createProject adds the owner in personal namespaces only).
        await appendNew(trx, batch, { streamId: projectStreamId(p.id), key: p.id, decider: projectDecider, commands: [create], index: projectEventIndex, claims: projectClaims, metadata: metadataOf(g.owner) });
      }
      await insertClaims(trx, batch.claims);
    });
    result.events += batch.events;
    result.streams += chunk.length;
  });
  return result;
}

/** Messages between seedGroups and its seeding processes (bench/seed-worker.ts). */
export type SeedWorkerMessage =
  | { type: 'init'; url: string; options: ForestOptions; firstGroupId: number; firstProjectId: number; worker: number; workers: number; parallel: number }
  | { type: 'step'; step: SeedStep };
export type SeedWorkerReply =
  | { type: 'ready' }
  /** `cpuMicros`: the process's CPU time so far (user + system). */
  | { type: 'done'; events: number; memberships: number; streams: number; cpuMicros: number }
  | { type: 'error'; error: string };

/**
 * Seeds the forest: ids reserved here, the work split among `workers` child processes
 * (bench/seed-worker.ts; node's side of the seeding — deciding, hashing, kysely and pg — is
 * CPU-bound, one process per core), step by step (a level of groups sees its parents committed).
 */
export async function seedGroups(db: Db, url: string, options: GroupSeedOptions): Promise<GroupSeed> {
  const started = performance.now();
  const firstGroupId = await reserveIds(db, 'namespaces_id_seq', options.groups);
  const firstProjectId = await reserveIds(db, 'projects_id_seq', options.projects);
  const forestOptions: ForestOptions = { groups: options.groups, projects: options.projects, users: options.users, member: options.member, memberGroups: options.memberGroups };
  const forest = buildForest(forestOptions, firstGroupId, firstProjectId);
  const workers = Math.max(1, options.workers);
  const parallel = Math.max(1, Math.ceil(options.parallel / workers));
  const children = await Promise.all(
    Array.from({ length: workers }, (_, worker) => SeedWorker.start({ type: 'init', url, options: forestOptions, firstGroupId, firstProjectId, worker, workers, parallel })),
  );
  let events = 0;
  let memberships = 0;
  const cpuMicros = children.map(() => 0);
  const run = async (step: SeedStep) => {
    const results = await Promise.all(children.map((c) => c.step(step)));
    for (const [i, r] of results.entries()) {
      events += r.events;
      memberships += r.memberships;
      cpuMicros[i] = r.cpuMicros;
    }
    return results.reduce((n, r) => n + r.streams, 0);
  };
  try {
    const maxDepth = forest.groups.reduce((d, g) => Math.max(d, g.depth), 0);
    for (let depth = 0; depth <= maxDepth; depth++) options.log(`    groups at depth ${depth}: ${await run({ kind: 'groups', depth })}`);
    const groupsDone = performance.now();
    options.log(`    projects: ${await run({ kind: 'projects' })}`);
    const finished = performance.now();
    return {
      groups: forest.groups.length,
      topLevel: forest.topLevel,
      maxDepth,
      projects: forest.projects.length,
      memberships,
      memberOf: forest.memberOf,
      events,
      workers,
      workersCpuSeconds: cpuMicros.reduce((a, b) => a + b, 0) / 1e6,
      seconds: { groups: (groupsDone - started) / 1000, projects: (finished - groupsDone) / 1000, total: (finished - started) / 1000 },
      group: forest.group,
      subtree: forest.subtree,
    };
  } finally {
    for (const c of children) c.stop();
  }
}

class SeedWorker {
  private waiting: { resolve: (r: SeedWorkerReply) => void; reject: (e: Error) => void } | undefined;
  private constructor(private readonly child: ChildProcess) {
    child.on('message', (reply: SeedWorkerReply) => {
      const waiter = this.waiting;
      this.waiting = undefined;
      if (reply.type === 'error') waiter?.reject(new Error(`seed worker: ${reply.error}`));
      else waiter?.resolve(reply);
    });
    child.on('exit', (code) => {
      this.waiting?.reject(new Error(`seed worker exited (${code})`));
      this.waiting = undefined;
    });
  }

  static async start(init: Extract<SeedWorkerMessage, { type: 'init' }>): Promise<SeedWorker> {
    const child = fork(join(HERE, 'seed-worker.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const worker = new SeedWorker(child);
    await worker.send(init);
    return worker;
  }

  private send(message: SeedWorkerMessage): Promise<SeedWorkerReply> {
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.child.send(message);
    });
  }

  async step(step: SeedStep) {
    const reply = await this.send({ type: 'step', step });
    if (reply.type !== 'done') throw new Error(`seed worker: unexpected ${reply.type}`);
    return reply;
  }

  /** Disconnecting lets the child close its pool and exit; a child that hangs is killed. */
  stop() {
    if (this.child.exitCode !== null) return;
    if (this.child.connected) this.child.disconnect();
    setTimeout(() => this.child.exitCode === null && this.child.kill(), 5000).unref();
  }
}
