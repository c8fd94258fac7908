import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { groupAccessLevelOf, projectAccessLevelOf, viewerOf } from '../../src/projections/access.js';
import { checkWorlds } from '../support/worlds.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * One authorization model, every place the same answer: for random hierarchies (groups,
 * subgroups, group and personal projects) and memberships (random levels, some expired by
 * the command clock), the per-project / per-group functions, the list filters
 * (GET /projects?min_access_level=N, GET /groups?min_access_level=N), the route decisions
 * (visibility, PUT /projects/:id, PUT /groups/:id) and the entity's abilities all agree with
 * GitLab's rule: the highest level over every way in, until a membership's expires_at.
 *
 * The state is reached through the API only. Project shares are not generated: no write path
 * creates them yet (they are covered by test/http/projects-list.test.ts's fixture).
 */

const DAY = 24 * 60 * 60 * 1000;
const START = Date.parse('2032-01-01T12:00:00Z');
let clock = new Date(START);
const dateIn = (days: number) => new Date(clock.getTime() + days * DAY).toISOString().slice(0, 10);

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer({}, { now: () => clock });
});
afterAll(() => api.close());

const USERS = 3;
const LEVELS = [10, 20, 30, 40, 50] as const;
type Expiry = 'never' | 'expired' | 'active';

const worldArbitrary = fc.record({
  /** Each group's parent: an earlier group (by index modulo) or none. */
  groups: fc.array(fc.option(fc.nat(), { nil: undefined }), { minLength: 1, maxLength: 4 }),
  /** Each project's namespace: a group (by index modulo), or (undefined) user 0's personal namespace. */
  projects: fc.array(fc.option(fc.nat(), { nil: undefined, freq: 5 }), { minLength: 1, maxLength: 4 }),
  memberships: fc.array(
    fc.record({
      user: fc.nat({ max: USERS - 1 }),
      kind: fc.constantFrom('groups' as const, 'projects' as const),
      target: fc.nat(),
      level: fc.constantFrom(...LEVELS),
      expiry: fc.constantFrom<Expiry>('never', 'never', 'expired', 'active'),
    }),
    { maxLength: 8 },
  ),
});
type World = typeof worldArbitrary extends fc.Arbitrary<infer T> ? T : never;

interface Group {
  id: number;
  /** Root first, itself last. */
  path: number[];
}
interface Project {
  id: number;
  groupPath: number[];
  personalOf: number | undefined;
}
interface Membership {
  user: number;
  kind: 'groups' | 'projects';
  id: number;
  level: number;
  expiresAt: string | null;
}

let serial = 0;
const ok = <R extends { status: number; text: string }>(res: R, what: string): R => {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res;
};

/** Builds the world through the API; the clock then moves past the expired memberships. */
async function build(world: World) {
  const users: { id: number; token: string }[] = [];
  for (let i = 0; i < USERS; i++) {
    const { user, token } = await api.createUser({ username: `authz${++serial}_${process.pid}` });
    users.push({ id: user.id, token });
  }
  const groups: Group[] = [];
  for (const [i, parentIndex] of world.groups.entries()) {
    const parent = parentIndex === undefined || i === 0 ? undefined : groups[parentIndex % i]!;
    const path = `authz-g${++serial}`;
    const body = { name: path, path, visibility: 'private', ...(parent ? { parent_id: parent.id } : {}) };
    const created = ok(await api.post('/groups', body), 'POST /groups').body;
    groups.push({ id: created.id, path: [...(parent?.path ?? []), created.id] });
  }
  const projects: Project[] = [];
  for (const groupIndex of world.projects) {
    const name = `authz-p${++serial}`;
    if (groupIndex === undefined) {
      const created = ok(await api.post('/projects', { name, visibility: 'private' }, { token: users[0]!.token }), 'POST /projects').body;
      projects.push({ id: created.id, groupPath: [], personalOf: 0 });
    } else {
      const group = groups[groupIndex % groups.length]!;
      const created = ok(await api.post('/projects', { name, namespace_id: group.id, visibility: 'private' }), 'POST /projects').body;
      projects.push({ id: created.id, groupPath: group.path, personalOf: undefined });
    }
  }
  // Expiring memberships end on day +10 or +40; the clock then moves to day +20.
  const memberships: Membership[] = [];
  for (const m of world.memberships) {
    const target = m.kind === 'groups' ? groups[m.target % groups.length]! : projects[m.target % projects.length]!;
    const expiresAt = m.expiry === 'never' ? null : dateIn(m.expiry === 'expired' ? 10 : 40);
    // GitLab: owner is a group role; a project's highest is maintainer.
    const level = m.kind === 'projects' ? Math.min(m.level, 40) : m.level;
    const res = await api.post(`/${m.kind}/${target.id}/members`, { user_id: users[m.user]!.id, access_level: level, ...(expiresAt ? { expires_at: expiresAt } : {}) });
    // A second membership of the same user, or one below an inherited level, is refused (409, 400): not part of the world.
    if (res.status === 201) memberships.push({ user: m.user, kind: m.kind, id: target.id, level, expiresAt });
    else expect([400, 409], res.text).toContain(res.status);
  }
  clock = new Date(clock.getTime() + 20 * DAY);
  return { users, groups, projects, memberships, today: dateIn(0) };
}

type Built = Awaited<ReturnType<typeof build>>;

/** The oracle: GitLab's rule written out plainly. */
function expected(built: Built) {
  const active = (m: Membership) => m.expiresAt === null || m.expiresAt >= built.today;
  const levelOn = (user: number, kind: 'groups' | 'projects', id: number) =>
    built.memberships.filter((m) => m.user === user && m.kind === kind && m.id === id && active(m)).map((m) => m.level);
  const max = (levels: number[]) => (levels.length === 0 ? null : Math.max(...levels));
  const groupLevel = (user: number, group: Group) => max(group.path.flatMap((id) => levelOn(user, 'groups', id)));
  const projectLevel = (user: number, project: Project) =>
    max([
      ...levelOn(user, 'projects', project.id),
      ...project.groupPath.flatMap((id) => levelOn(user, 'groups', id)),
      // GitLab 12: the owner of a personal namespace is its projects' maintainer.
      ...(project.personalOf === user ? [40] : []),
    ]);
  return { groupLevel, projectLevel };
}

const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);

async function check(built: Built) {
  const { groupLevel, projectLevel } = expected(built);
  const { db } = api.handle;
  const projectIds = new Set(built.projects.map((p) => p.id));
  const groupIds = new Set(built.groups.map((g) => g.id));
  for (const [u, user] of built.users.entries()) {
    const token = user.token;
    const viewer = viewerOf({ id: user.id, is_admin: false, external: false }, built.today)!;
    const levels = new Map(built.projects.map((p) => [p.id, projectLevel(u, p)]));
    const groupLevels = new Map(built.groups.map((g) => [g.id, groupLevel(u, g)]));
    const why = (what: string) => `user ${u}, ${what}; memberships ${JSON.stringify(built.memberships)}`;

    for (const n of LEVELS) {
      // GET /projects?min_access_level=N: exactly the projects at N or above.
      const listed = ok(await api.get('/projects', { token, query: { min_access_level: n, per_page: 100 } }), 'GET /projects');
      const want = built.projects.filter((p) => (levels.get(p.id) ?? 0) >= n).map((p) => p.id);
      expect(sorted(listed.body.map((p: any) => p.id).filter((id: number) => projectIds.has(id))), why(`projects min ${n}`)).toEqual(sorted(want));
      if (n === 10) {
        // The entity's abilities from the same level: a private project's code (ci_config_path) for reporters and above.
        for (const p of listed.body.filter((r: any) => projectIds.has(r.id))) {
          expect('ci_config_path' in p, why(`ci_config_path of ${p.id}`)).toBe((levels.get(p.id) ?? 0) >= 20);
        }
      }
      // GET /groups?min_access_level=N: exactly the groups at N or above.
      const groups = ok(await api.get('/groups', { token, query: { min_access_level: n, per_page: 100 } }), 'GET /groups');
      const wantGroups = built.groups.filter((g) => (groupLevels.get(g.id) ?? 0) >= n).map((g) => g.id);
      expect(sorted(groups.body.map((g: any) => g.id).filter((id: number) => groupIds.has(id))), why(`groups min ${n}`)).toEqual(sorted(wantGroups));
    }

    for (const project of built.projects) {
      const level = levels.get(project.id) ?? null;
      expect(await projectAccessLevelOf(db, viewer, project.id), why(`level on project ${project.id}`)).toBe(level);
      const shown = await api.get(`/projects/${project.id}`, { token });
      expect(shown.status, why(`GET project ${project.id}`)).toBe(level === null ? 404 : 200);
      if (shown.status === 200) expect('runners_token' in shown.body, why(`runners_token of ${project.id}`)).toBe(level! >= 40);
      const updated = await api.put(`/projects/${project.id}`, { description: `by ${u}` }, { token });
      expect(updated.status, why(`PUT project ${project.id}`)).toBe(level === null ? 404 : level >= 40 ? 200 : 403);
    }

    for (const group of built.groups) {
      const level = groupLevels.get(group.id) ?? null;
      expect(await groupAccessLevelOf(db, viewer, group.id), why(`level on group ${group.id}`)).toBe(level);
      // GitLab's has_projects: a project the user may see inside makes a private group readable.
      const readable = level !== null || built.projects.some((p) => p.groupPath.includes(group.id) && levels.get(p.id) != null);
      expect((await api.get(`/groups/${group.id}`, { token })).status, why(`GET group ${group.id}`)).toBe(readable ? 200 : 404);
      const updated = await api.put(`/groups/${group.id}`, { description: `by ${u}` }, { token });
      expect(updated.status, why(`PUT group ${group.id}`)).toBe(!readable ? 404 : level !== null && level >= 50 ? 200 : 403);
    }
  }
  // Administrators are aside: allowed whatever their memberships.
  ok(await api.put(`/projects/${built.projects[0]!.id}`, { description: 'by root' }), 'PUT /projects/:id as admin');
}

describe('one authorization model', () => {
  // Bounded: up to 12 worlds (about a hundred requests each), no new one started after 40 s,
  // so a slow machine or backend checks fewer worlds rather than running past a minute.
  it('answers the same level in every place, for random hierarchies and memberships', { timeout: 120_000 }, async () => {
    const worlds = await checkWorlds(worldArbitrary, { numRuns: 12, ms: 40_000 }, async (world) => {
      await check(await build(world));
      // The next world starts well after this one's expiry dates.
      clock = new Date(clock.getTime() + 100 * DAY);
    });
    expect(worlds).toBeGreaterThan(0);
  });
});
