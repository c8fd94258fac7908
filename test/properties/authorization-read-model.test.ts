import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oracleLevels, projectedLevels } from '../support/authorization-oracle.js';
import { settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Issue 22 §1: the authorizations projection (GitLab's project_authorizations, and the same
 * for groups) holds, after every write, what the plain rule computes from the source rows
 * (test/support/authorization-oracle.ts, forgelog's reads before the projection) — on the day
 * and on days when memberships and shares have expired. Random hierarchies, personal and
 * group projects, then random writes through the API: memberships added, changed and removed,
 * projects shared and unshared, projects and groups deleted. The server's close() replays the
 * log twice (test/support/server.ts), so the projection's replay equivalence is checked too.
 */

const DAY = 24 * 60 * 60 * 1000;
const START = Date.parse('2033-01-01T12:00:00Z');
const clock = new Date(START);
const dateIn = (days: number) => new Date(clock.getTime() + days * DAY).toISOString().slice(0, 10);

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer({}, { now: () => clock });
});
afterAll(() => api.close());

const USERS = 3;
const expiryArbitrary = fc.constantFrom<number | null>(null, null, 10, 40);
const levelArbitrary = fc.constantFrom(10, 20, 30, 40, 50);
const target = fc.record({ kind: fc.constantFrom('groups' as const, 'projects' as const), index: fc.nat() });

const operationArbitrary = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('add' as const), user: fc.nat({ max: USERS - 1 }), target, level: levelArbitrary, expiry: expiryArbitrary }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('update' as const), user: fc.nat({ max: USERS - 1 }), target, level: levelArbitrary, expiry: expiryArbitrary }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('remove' as const), user: fc.nat({ max: USERS - 1 }), target }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('share' as const), project: fc.nat(), group: fc.nat(), level: fc.constantFrom(10, 20, 30, 40), expiry: expiryArbitrary }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unshare' as const), project: fc.nat(), group: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deleteProject' as const), project: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deleteGroup' as const), group: fc.nat() }) },
);

const worldArbitrary = fc.record({
  /** Each group's parent: an earlier group (by index modulo) or none. */
  groups: fc.array(fc.option(fc.nat(), { nil: undefined }), { minLength: 1, maxLength: 5 }),
  /** Each project's namespace: a group (by index modulo), or a user's personal namespace. */
  projects: fc.array(fc.oneof(fc.record({ group: fc.nat() }), fc.record({ user: fc.nat({ max: USERS - 1 }) })), { minLength: 1, maxLength: 5 }),
  operations: fc.array(operationArbitrary, { minLength: 1, maxLength: 14 }),
});
type World = typeof worldArbitrary extends fc.Arbitrary<infer T> ? T : never;

let serial = 0;
const ok = <R extends { status: number; text: string }>(res: R, what: string): R => {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res;
};

async function run(world: World) {
  const users: { id: number; token: string }[] = [];
  for (let i = 0; i < USERS; i++) {
    const { user, token } = await api.createUser({ username: `pa${++serial}_${process.pid}` });
    users.push({ id: user.id, token });
  }
  const groups: number[] = [];
  for (const [i, parentIndex] of world.groups.entries()) {
    const parent = parentIndex === undefined || i === 0 ? undefined : groups[parentIndex % i];
    const path = `pa-g${++serial}`;
    groups.push(ok(await api.post('/groups', { name: path, path, visibility: 'private', ...(parent ? { parent_id: parent } : {}) }), 'POST /groups').body.id);
  }
  const projects: number[] = [];
  for (const place of world.projects) {
    const name = `pa-p${++serial}`;
    const res =
      'group' in place
        ? await api.post('/projects', { name, namespace_id: groups[place.group % groups.length], visibility: 'private' })
        : await api.post('/projects', { name, visibility: 'private' }, { token: users[place.user]!.token });
    projects.push(ok(res, 'POST /projects').body.id);
  }
  const userIds = users.map((u) => u.id);
  const history: string[] = [];
  await compare(userIds, history);

  for (const operation of world.operations) {
    const project = (i: number) => projects[i % projects.length]!;
    const group = (i: number) => groups[i % groups.length]!;
    const targetOf = (t: { kind: 'groups' | 'projects'; index: number }) => (t.kind === 'groups' ? group(t.index) : project(t.index));
    const expiresAt = (expiry: number | null) => (expiry === null ? {} : { expires_at: dateIn(expiry) });
    let res;
    switch (operation.op) {
      case 'add':
        res = await api.post(`/${operation.target.kind}/${targetOf(operation.target)}/members`, { user_id: userIds[operation.user], access_level: operation.level, ...expiresAt(operation.expiry) });
        break;
      case 'update':
        res = await api.put(`/${operation.target.kind}/${targetOf(operation.target)}/members/${userIds[operation.user]}`, { access_level: operation.level, ...expiresAt(operation.expiry) });
        break;
      case 'remove':
        res = await api.del(`/${operation.target.kind}/${targetOf(operation.target)}/members/${userIds[operation.user]}`);
        break;
      case 'share':
        res = await api.post(`/projects/${project(operation.project)}/share`, { group_id: group(operation.group), group_access: operation.level, ...expiresAt(operation.expiry) });
        break;
      case 'unshare':
        res = await api.del(`/projects/${project(operation.project)}/share/${group(operation.group)}`);
        break;
      case 'deleteProject':
        res = await api.del(`/projects/${project(operation.project)}`);
        break;
      case 'deleteGroup':
        res = await api.del(`/groups/${group(operation.group)}`);
        break;
    }
    // Refusals (a level below an inherited one, a share of the project's own group, gone targets) are part of the world too.
    expect(res.status, `${JSON.stringify(operation)}: ${res.text}`).toBeLessThan(500);
    if (operation.op === 'deleteProject' || operation.op === 'deleteGroup') await settled(api);
    history.push(`${JSON.stringify(operation)} → ${res.status}`);
    await compare(userIds, history);
  }
}

/** The projection against the oracle, today and on the days after the expiries at +10 and +40. */
async function compare(userIds: number[], history: string[]) {
  const { db } = api.handle;
  for (const day of [0, 20, 50]) {
    const date = dateIn(day);
    const [want, got] = await Promise.all([oracleLevels(db, userIds, date), projectedLevels(db, userIds, date)]);
    expect(got, `on ${date}, after:\n${history.join('\n')}`).toEqual(want);
  }
}

describe('the authorizations projection', () => {
  // Bounded: no new world after 40 s, so a slow machine or backend checks fewer worlds rather than running long.
  it('holds what the plain rule computes, after every write of random worlds', { timeout: 120_000 }, async () => {
    let worlds = 0;
    await fc.assert(
      fc.asyncProperty(worldArbitrary, async (world) => {
        await run(world);
        worlds++;
      }),
      { numRuns: 25, interruptAfterTimeLimit: 40_000, markInterruptAsFailure: false },
    );
    expect(worlds).toBeGreaterThan(0);
  });
});
