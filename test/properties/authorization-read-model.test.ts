import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oracleLevels, oracleRows, projectedLevels, projectedRows } from '../support/authorization-oracle.js';
import { onPostgres } from '../support/database.js';
import { checkWorlds } from '../support/worlds.js';
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
    let deleted: number | undefined;
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
        deleted = project(operation.project);
        res = await api.del(`/projects/${deleted}`);
        break;
      case 'deleteGroup':
        deleted = group(operation.group);
        res = await api.del(`/groups/${deleted}`);
        break;
    }
    // Refusals (a level below an inherited one, a share of the project's own group, gone targets) are part of the world too.
    expect(res.status, `${JSON.stringify(operation)}: ${res.text}`).toBeLessThan(500);
    // A deletion (202) hides its target at once, and a reactor removes it after: the next writes
    // and comparisons run beside that removal, as a user's next requests would.
    if (res.status === 202) await hidden(`/${operation.op === 'deleteGroup' ? 'groups' : 'projects'}/${deleted}`);
    history.push(`${JSON.stringify(operation)} → ${res.status}`);
    await compare(userIds, history);
  }
  // The world's last comparisons may have run before its removals finished: once more after them.
  await removed(projects, groups);
  await compare(userIds, [...history, '(the removals finished)']);
}

/** Waits until the removal reactor has deleted those of the projects and groups a deletion hid (pending_delete). */
async function removed(projectIds: number[], groupIds: number[] = []) {
  const { db } = api.handle;
  for (let i = 0; i < 200; i++) {
    const [projects, groups] = await Promise.all([
      db.selectFrom('projects').select('id').where('id', 'in', projectIds).where('pending_delete', '=', true).execute(),
      groupIds.length === 0 ? [] : db.selectFrom('namespaces').select('id').where('id', 'in', groupIds).where('pending_delete', '=', true).execute(),
    ]);
    if (projects.length + groups.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`projects ${projectIds.join(', ')} or groups ${groupIds.join(', ')} were not removed`);
}

/** A deletion's 202 is answered once the target is hidden: from then on it is 404 (its removal may still be under way). */
async function hidden(path: string) {
  expect((await api.get(path)).status, `${path} after its deletion`).toBe(404);
}

/**
 * The projection against the oracle, today and on the days after the expiries at +10 and +40,
 * and row by row (oracleRows), all read in one snapshot (a writer still in flight would
 * otherwise come between them).
 */
async function compare(userIds: number[], history: string[]) {
  await api.handle.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      for (const day of [0, 20, 50]) {
        const date = dateIn(day);
        const want = await oracleLevels(trx, userIds, date);
        const got = await projectedLevels(trx, userIds, date);
        expect(got, `on ${date}, after:\n${history.join('\n')}`).toEqual(want);
      }
      expect(await projectedRows(trx, userIds), `rows, after:\n${history.join('\n')}`).toEqual(await oracleRows(trx, userIds));
    });
}

describe('the authorizations projection', () => {
  // Bounded: no new world after 40 s, so a slow machine or backend checks fewer worlds rather than running long.
  it('holds what the plain rule computes, after every write of random worlds', { timeout: 120_000 }, async () => {
    expect(await checkWorlds(worldArbitrary, { numRuns: 25, ms: 40_000 }, run)).toBeGreaterThan(0);
  });
});

describe.runIf(onPostgres)('the authorizations projection under concurrent writers', () => {
  // A membership refresh and a project, subgroup or share refresh in flight at once would each
  // miss what the other has not committed, without the projection's hierarchy locks; two
  // refreshes of one project's every user (a share, and a group it is shared with going) would
  // both write its rows; a membership refresh of a group a project is shared with would write
  // its user's row back after the project's deletion deleted its rows.
  it('holds what the plain rule computes when memberships, projects, subgroups, shares, project and group deletions are written at once', async () => {
    const users = await Promise.all([0, 1, 2, 3].map(async () => (await api.createUser({ username: `pc${++serial}_${process.pid}` })).user.id as number));
    const group = async (prefix: string) => ok(await api.post('/groups', { name: `${prefix}${++serial}`, path: `${prefix}${serial}`, visibility: 'private' }), 'POST /groups').body.id as number;
    for (let round = 0; round < 3; round++) {
      const [root, other, home, doomed] = [await group('pc-r'), await group('pc-o'), await group('pc-h'), await group('pc-d')];
      const existing = ok(await api.post('/projects', { name: `pc-e${++serial}`, namespace_id: other, visibility: 'private' }), 'POST /projects').body.id;
      // Shared with `other` (whose members change below) and `doomed` (deleted below), then shared with root.
      const linked = ok(await api.post('/projects', { name: `pc-l${++serial}`, namespace_id: home, visibility: 'private' }), 'POST /projects').body.id;
      for (const [target, access] of [[other, 40], [doomed, 30]] as const) ok(await api.post(`/projects/${linked}/share`, { group_id: target, group_access: access }), 'POST share');
      for (const user of users) ok(await api.post(`/groups/${doomed}/members`, { user_id: user, access_level: 20 }), 'POST doomed member');
      // Shared with `other`, whose members change below, and deleted meanwhile.
      const deleted: number[] = [];
      for (let i = 0; i < 3; i++) {
        const id = ok(await api.post('/projects', { name: `pc-x${++serial}`, namespace_id: home, visibility: 'private' }), 'POST /projects').body.id;
        ok(await api.post(`/projects/${id}/share`, { group_id: other, group_access: 30 }), 'POST share');
        deleted.push(id);
      }
      const writes: Promise<{ status: number; text: string }>[] = [
        ...users.map((user, i) => api.post(`/groups/${i % 2 ? other : root}/members`, { user_id: user, access_level: 20 + 10 * (i % 3) })),
        ...[0, 1, 2, 3, 4, 5].map((i) => api.post('/projects', { name: `pc-p${++serial}`, namespace_id: root, visibility: 'private', path: `pc-p${serial}-${i}` })),
        ...[0, 1].map(() => api.post('/groups', { name: `pc-s${++serial}`, path: `pc-s${serial}`, parent_id: root, visibility: 'private' })),
        api.post(`/projects/${existing}/share`, { group_id: root, group_access: 30 }),
        api.post(`/projects/${linked}/share`, { group_id: root, group_access: 10 }),
        api.del(`/groups/${doomed}`),
        ...deleted.map((id) => api.del(`/projects/${id}`)),
      ];
      for (const res of await Promise.all(writes)) expect(res.status, res.text).toBeLessThan(300);
      await hidden(`/groups/${doomed}`);
      await removed(deleted);
      await compare(users, [`round ${round}`]);
    }
  });
});
