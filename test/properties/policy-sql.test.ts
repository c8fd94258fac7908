import fc from 'fast-check';
import { sql, type Expression, type SqlBool } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Viewer } from '../../src/domain/access.js';
import { can } from '../../src/domain/policy/can.js';
import { groupAccessLevelOf, projectAccessLevelOf, viewerOf } from '../../src/projections/access.js';
import { groupHasProjectVisibleTo, groupReadableBy } from '../../src/projections/groups/queries.js';
import { mergeRequestReadableProjectIds } from '../../src/projections/merge-requests/list-query.js';
import { featureAvailable } from '../../src/domain/policy/project.js';
import { featureAvailableTo, projectReadableBy } from '../../src/projections/projects/queries.js';
import { checkWorlds } from '../support/worlds.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * One rule, two forms, the same answer: the abilities the lists ask in SQL (so a page is read
 * from an index) and the routes ask of the pure policy (src/domain/policy/) agree for every
 * viewer and project of random worlds —
 *   read_merge_request: mergeRequestReadableProjectIds (the merge request lists) and `can`;
 *   read_project: projectReadableBy (the project lists, feeds) and `can`;
 *   read_group: groupReadableBy (the group lists, epics, feeds) and `can`, its has_projects
 *     taken from the pure read_project of the projects inside — which the routes' query
 *     groupHasProjectVisibleTo answers too;
 *   a feature available (issues, merge requests): featureAvailableTo (the project lists'
 *     with_issues_enabled / with_merge_requests_enabled) and `featureAvailable` (the entity's
 *     issues_enabled / merge_requests_enabled).
 * Worlds: groups and subgroups, group and personal projects, visibilities, the merge requests
 * issues and repository features enabled / private / disabled, archived projects, memberships at
 * random levels; viewers anonymous, regular, external and administrator. All built through
 * the API.
 */

let api: TestServer;
const VISIBILITIES = ['private', 'internal', 'public'] as const;
type Visibility = (typeof VISIBILITIES)[number];
const FEATURE = ['enabled', 'private', 'disabled'] as const;
const LEVELS = [10, 20, 30, 40, 50] as const;

/** Regular (also the personal projects' owner), regular, external, administrator. */
let users: { id: number; token: string }[] = [];
beforeAll(async () => {
  api = await startTestServer();
  const kinds = [{}, {}, { external: true }, { admin: true }];
  users = [];
  for (const [i, attributes] of kinds.entries()) {
    const { user, token } = await api.createUser({ username: `polsql${i}_${process.pid}`, ...attributes });
    users.push({ id: user.id, token });
  }
});
afterAll(() => api.close());

const worldArbitrary = fc.record({
  /** Each group's parent (an earlier group by index modulo, or none) and visibility. */
  groups: fc.array(fc.record({ parent: fc.option(fc.nat(), { nil: undefined }), visibility: fc.constantFrom(...VISIBILITIES) }), { minLength: 1, maxLength: 3 }),
  projects: fc.array(
    fc.record({
      /** A group (by index modulo), or (undefined) user 0's personal namespace. */
      group: fc.option(fc.nat(), { nil: undefined, freq: 4 }),
      visibility: fc.constantFrom(...VISIBILITIES),
      issues: fc.constantFrom(...FEATURE),
      mergeRequests: fc.constantFrom(...FEATURE),
      repository: fc.constantFrom(...FEATURE),
      archived: fc.boolean(),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  memberships: fc.array(
    fc.record({
      user: fc.nat({ max: 3 }),
      kind: fc.constantFrom('groups' as const, 'projects' as const),
      target: fc.nat(),
      level: fc.constantFrom(...LEVELS),
    }),
    { maxLength: 6 },
  ),
});
type World = typeof worldArbitrary extends fc.Arbitrary<infer T> ? T : never;

let serial = 0;
const ok = <R extends { status: number; text: string }>(res: R, what: string): R => {
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${res.text}`);
  return res;
};
/** GitLab: a subgroup or project is no more visible than its group (VisibilityLevelValidator). */
const atMost = (wanted: Visibility, ceiling: Visibility): Visibility => VISIBILITIES[Math.min(VISIBILITIES.indexOf(wanted), VISIBILITIES.indexOf(ceiling))]!;

async function build(world: World) {
  const groups: { id: number; path: number[]; visibility: Visibility }[] = [];
  for (const [i, g] of world.groups.entries()) {
    const parent = g.parent === undefined || i === 0 ? undefined : groups[g.parent % i]!;
    const path = `polsql-g${++serial}-${process.pid}`;
    const visibility = parent ? atMost(g.visibility, parent.visibility) : g.visibility;
    const created = ok(await api.post('/groups', { name: path, path, visibility, ...(parent ? { parent_id: parent.id } : {}) }), 'POST /groups').body;
    groups.push({ id: created.id, path: [...(parent?.path ?? []), created.id], visibility });
  }
  const projects: { id: number; groupPath: number[] }[] = [];
  for (const p of world.projects) {
    const name = `polsql-p${++serial}`;
    const features = { issues_access_level: p.issues, merge_requests_access_level: p.mergeRequests, repository_access_level: p.repository };
    let created;
    if (p.group === undefined) {
      created = ok(await api.post('/projects', { name, visibility: p.visibility, ...features }, { token: users[0]!.token }), 'POST /projects').body;
      projects.push({ id: created.id, groupPath: [] });
    } else {
      const group = groups[p.group % groups.length]!;
      const visibility = atMost(p.visibility, group.visibility);
      created = ok(await api.post('/projects', { name, namespace_id: group.id, visibility, ...features }), 'POST /projects').body;
      projects.push({ id: created.id, groupPath: group.path });
    }
    if (p.archived) ok(await api.post(`/projects/${created.id}/archive`), 'POST /projects/:id/archive');
  }
  for (const m of world.memberships) {
    const target = m.kind === 'groups' ? groups[m.target % groups.length]! : projects[m.target % projects.length]!;
    const level = m.kind === 'projects' ? Math.min(m.level, 40) : m.level;
    const res = await api.post(`/${m.kind}/${target.id}/members`, { user_id: users[m.user]!.id, access_level: level });
    // A second membership of the same user, or one below an inherited level, is refused: not part of the world.
    if (res.status !== 201) expect([400, 409], res.text).toContain(res.status);
  }
  return { groups, projects };
}

type Built = Awaited<ReturnType<typeof build>>;

/** The ids among `ids` for which the SQL condition holds. */
async function sqlAnswer(table: 'projects' | 'namespaces', ids: number[], condition: Expression<SqlBool>): Promise<number[]> {
  const rows = await api.handle.db.selectFrom(table).select('id').where('id', 'in', ids).where(condition).execute();
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

async function check(built: Built) {
  const { db } = api.handle;
  const today = new Date().toISOString().slice(0, 10);
  const projectIds = built.projects.map((p) => p.id);
  const groupIds = built.groups.map((g) => g.id);
  const projectRows = await db
    .selectFrom('projects')
    .selectAll()
    .select(sql<number | null>`(select n.owner_id from namespaces n where n.id = projects.namespace_id and n.kind = 'user')`.as('personal_owner_id'))
    .where('id', 'in', projectIds)
    .execute();
  const groupRows = await db.selectFrom('namespaces').selectAll().where('id', 'in', groupIds).execute();
  const rowsOf = await db.selectFrom('users').select(['id', 'is_admin', 'external']).where('id', 'in', users.map((u) => u.id)).orderBy('id').execute();
  const viewers: [string, Viewer | null][] = [['anonymous', null], ...rowsOf.map((u): [string, Viewer | null] => [`user ${u.id}${u.is_admin ? ' (admin)' : u.external ? ' (external)' : ''}`, viewerOf(u, today)])];

  for (const [who, viewer] of viewers) {
    const pure = { read_project: [] as number[], read_merge_request: [] as number[], issues: [] as number[], merge_requests: [] as number[] };
    for (const { personal_owner_id: personalOwnerId, ...project } of projectRows) {
      const role = await projectAccessLevelOf(db, viewer, project.id);
      const subject = { kind: 'project' as const, viewer, role, project, personalOwnerId };
      if (can(subject, 'read_project')) pure.read_project.push(project.id);
      if (can(subject, 'read_merge_request')) pure.read_merge_request.push(project.id);
      for (const feature of ['issues', 'merge_requests'] as const) if (featureAvailable(subject, feature)) pure[feature].push(project.id);
    }
    const readGroup: number[] = [];
    for (const group of groupRows) {
      const role = await groupAccessLevelOf(db, viewer, group.id);
      const hasProjects = built.projects.some((p) => p.groupPath.includes(group.id) && pure.read_project.includes(p.id));
      // The route's has_projects query (userGroup) is the same rule once more.
      expect(await groupHasProjectVisibleTo(db, viewer, group.id), `${who}, has_projects of group ${group.id}`).toBe(hasProjects);
      if (can({ kind: 'group', viewer, role, group, hasProjects }, 'read_group')) readGroup.push(group.id);
    }
    const why = (ability: string) => `${who}, ${ability}; projects ${JSON.stringify(projectRows.map((p) => [p.id, p.visibility, p.settings.issues_access_level, p.settings.merge_requests_access_level, p.settings.repository_access_level, p.archived]))}`;
    const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);
    expect(await sqlAnswer('projects', projectIds, sql<SqlBool>`projects.id in (${mergeRequestReadableProjectIds(viewer)})`), why('read_merge_request')).toEqual(
      sorted(pure.read_merge_request),
    );
    expect(await sqlAnswer('projects', projectIds, projectReadableBy(viewer)), why('read_project')).toEqual(sorted(pure.read_project));
    expect(await sqlAnswer('namespaces', groupIds, groupReadableBy(viewer)), why('read_group')).toEqual(sorted(readGroup));
    for (const feature of ['issues', 'merge_requests'] as const) {
      expect(await sqlAnswer('projects', projectIds, featureAvailableTo(viewer, feature)), why(`${feature} available`)).toEqual(sorted(pure[feature]));
    }
  }
}

describe('abilities written twice', () => {
  // Bounded: up to 40 worlds (a few dozen requests each), no new one started after 30 s.
  it('answer the same in SQL as in the pure policy, for every viewer and project of random worlds', { timeout: 120_000 }, async () => {
    expect(await checkWorlds(worldArbitrary, { numRuns: 40, ms: 30_000 }, async (world) => check(await build(world)))).toBeGreaterThan(0);
  });
});
