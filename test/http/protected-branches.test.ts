import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protectedBranchesProjector } from '../../src/projections/protected-branches/projector.js';
import { addMember, createGroup, createProject, settled, type ProjectFixture } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { expectReplayEquivalence } from '../support/replay.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
let owner: { user: any; token: string };
let anna: { user: any; token: string };
let outsider: { user: any; token: string };

beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  [owner, anna, outsider] = await Promise.all([api.createUser(), api.createUser({ name: 'Anna Zed' }), api.createUser()]);
});
afterAll(() => api.close());

/** A fresh private project in a group `owner` owns, with Anna as a developer. */
async function fresh(): Promise<ProjectFixture> {
  const group = await createGroup(api, { token: owner.token });
  const project = await createProject(api, { token: owner.token, group });
  await addMember(api, 'projects', project.id, anna.user.id, 30);
  return project;
}

const base = (p: ProjectFixture) => `/projects/${p.id}/protected_branches`;
const protect = (p: ProjectFixture, body: Record<string, unknown>) => api.post(base(p), body, { token: owner.token });
const rule = (access_level: number, access_level_description: string, ids: { user_id?: number; group_id?: number } = {}) => ({
  access_level,
  access_level_description,
  user_id: ids.user_id ?? null,
  group_id: ids.group_id ?? null,
});
const maintainers = rule(40, 'Maintainers');

// The running server's plan, switched by the tier tests and restored.
const config = () => api.runtime.config as { plan: string };
async function onPlan<T>(plan: string, run: () => Promise<T>): Promise<T> {
  const before = config().plan;
  config().plan = plan;
  try {
    return await run();
  } finally {
    config().plan = before;
  }
}

describe('POST /projects/:id/protected_branches', () => {
  it('protects a name with maintainers for push, merge and unprotect by default (201)', async () => {
    const p = await fresh();
    const res = await protect(p, { name: 'main' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      name: 'main',
      push_access_levels: [maintainers],
      merge_access_levels: [maintainers],
      unprotect_access_levels: [maintainers],
      code_owner_approval_required: false,
    });
    expect((await api.get(`${base(p)}/main`, { token: owner.token })).body).toEqual(res.body);
    const row = await api.handle.db.selectFrom('protected_branches').select('id').where('project_id', '=', p.id).executeTakeFirstOrThrow();
    expect((await api.events(`protected-branch-${row.id}`)).map((e) => e.type)).toEqual(['ProtectedBranchCreated']);
  });

  it('takes the levels 0, 30 and 60 with their descriptions', async () => {
    const p = await fresh();
    const res = await protect(p, { name: 'release/*', push_access_level: 0, merge_access_level: '30', unprotect_access_level: 60 });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      push_access_levels: [rule(0, 'No one')],
      merge_access_levels: [rule(30, 'Developers + Maintainers')],
      unprotect_access_levels: [rule(60, 'Admin')],
    });
  });

  it("answers Grape's 400 for a missing name or a level outside 0, 30, 40, 60", async () => {
    const p = await fresh();
    expect(await protect(p, {})).toMatchObject({ status: 400, body: { error: 'name is missing' } });
    expect(await protect(p, { name: 'x', push_access_level: 20, unprotect_access_level: 50 })).toMatchObject({
      status: 400,
      body: { error: 'push_access_level does not have a valid value, unprotect_access_level does not have a valid value' },
    });
    expect(await protect(p, { name: 'x', code_owner_approval_required: 'maybe' })).toMatchObject({ status: 400, body: { error: 'code_owner_approval_required is invalid' } });
    expect((await api.get(base(p), { token: owner.token })).body).toEqual([]);
  });

  it("refuses a name already protected: 409 \"Protected branch '<name>' already exists\"", async () => {
    const p = await fresh();
    expect((await protect(p, { name: 'feature*' })).status).toBe(201);
    expect(await protect(p, { name: 'feature*', push_access_level: 30 })).toMatchObject({ status: 409, body: { message: "Protected branch 'feature*' already exists" } });
    // Another project may protect the same name.
    expect((await protect(await fresh(), { name: 'feature*' })).status).toBe(201);
  });

  it("answers a blank name with the model's 422", async () => {
    const p = await fresh();
    expect(await protect(p, { name: ' ' })).toMatchObject({ status: 422, body: { message: ["Name can't be blank"] } });
  });

  it('lets a member user push, without the default role rule (the user rule keeps level 40)', async () => {
    const p = await fresh();
    const res = await protect(p, { name: 'main', allowed_to_push: [{ user_id: anna.user.id }], allowed_to_unprotect: [{ access_level: 40 }, { access_level: 60 }] });
    expect(res.status).toBe(201);
    expect(res.body.push_access_levels).toEqual([rule(40, 'Anna Zed', { user_id: anna.user.id })]);
    expect(res.body.merge_access_levels).toEqual([maintainers]);
    expect(res.body.unprotect_access_levels).toEqual([maintainers, rule(60, 'Admin')]);
    // A role and rules together: the role first.
    const both = await protect(p, { name: 'dev', push_access_level: 30, allowed_to_push: [{ user_id: anna.user.id }] });
    expect(both.body.push_access_levels).toEqual([rule(30, 'Developers + Maintainers'), rule(40, 'Anna Zed', { user_id: anna.user.id })]);
  });

  it('refuses users without access and groups the project is not shared with (422, full messages, merge first)', async () => {
    const p = await fresh();
    const group = await createGroup(api, { token: owner.token });
    const res = await protect(p, { name: 'main', allowed_to_push: [{ user_id: outsider.user.id }], allowed_to_merge: [{ group_id: group.id }] });
    expect(res).toMatchObject({
      status: 422,
      body: { message: ['Merge access levels group does not have access to the project', 'Push access levels user is not a member of the project'] },
    });
    expect((await protect(p, { name: 'main', allowed_to_push: [{ user_id: 999999 }] })).body).toEqual({ message: ['Push access levels user is not a member of the project'] });
    expect((await api.get(base(p), { token: owner.token })).body).toEqual([]);
  });

  it('refuses a rule that does not name exactly one of user_id, group_id and access_level (422)', async () => {
    const p = await fresh();
    for (const element of [{}, { user_id: anna.user.id, access_level: 30 }]) {
      expect(await protect(p, { name: 'main', allowed_to_push: [element] })).toMatchObject({
        status: 422,
        body: { message: ['Allowed to push must name exactly one of access_level, user_id and group_id'] },
      });
    }
    expect(await protect(p, { name: 'main', allowed_to_merge: [{ user_id: anna.user.id }, { user_id: anna.user.id }] })).toMatchObject({
      status: 422,
      body: { message: ['Merge access levels user has already been taken'] },
    });
  });

  it("answers Grape's 400 for malformed rules", async () => {
    const p = await fresh();
    expect(await protect(p, { name: 'main', allowed_to_push: [{ access_level: 20 }], allowed_to_merge: [{ user_id: 'anna' }] })).toMatchObject({
      status: 400,
      body: { error: 'allowed_to_push[access_level] does not have a valid value, allowed_to_merge[user_id] is invalid' },
    });
    expect(await protect(p, { name: 'main', allowed_to_unprotect: 'all' })).toMatchObject({ status: 400, body: { error: 'allowed_to_unprotect is invalid' } });
  });
});

describe('GET /projects/:id/protected_branches', () => {
  it('lists in protection order, paginated, filtered by a fuzzy search on the name', async () => {
    const p = await fresh();
    for (const name of ['main', 'release/*', 'Release-2', 'my.feature']) expect((await protect(p, { name })).status).toBe(201);
    const all = await api.get(base(p), { token: owner.token });
    expect(all.status).toBe(200);
    expect(all.body.map((b: any) => b.name)).toEqual(['main', 'release/*', 'Release-2', 'my.feature']);
    expect(all.headers.get('x-total')).toBe('4');
    const page = await api.get(base(p), { token: owner.token, query: { per_page: 2, page: 2 } });
    expect(page.body.map((b: any) => b.name)).toEqual(['Release-2', 'my.feature']);
    const search = async (term: string) => (await api.get(base(p), { token: owner.token, query: { search: term } })).body.map((b: any) => b.name);
    expect(await search('RELEASE')).toEqual(['release/*', 'Release-2']);
    expect(await search('ma')).toEqual([]);
    expect(await search('main')).toEqual(['main']);
    expect(await search('my.')).toEqual(['my.feature']);
  });
});

describe('GET /projects/:id/protected_branches/:name', () => {
  it('finds a wildcard or a dotted name, URL-encoded; 404 "Not found" otherwise', async () => {
    const p = await fresh();
    await protect(p, { name: 'release/*' });
    await protect(p, { name: 'my.feature' });
    expect(await api.get(`${base(p)}/release%2F*`, { token: owner.token })).toMatchObject({ status: 200, body: { name: 'release/*' } });
    expect(await api.get(`${base(p)}/my.feature`, { token: owner.token })).toMatchObject({ status: 200, body: { name: 'my.feature' } });
    expect(await api.get(`${base(p)}/Release%2F*`, { token: owner.token })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
});

describe('DELETE /projects/:id/protected_branches/:name', () => {
  it('unprotects (204); the name may be protected again', async () => {
    const p = await fresh();
    await protect(p, { name: 'release/*' });
    const res = await api.del(`${base(p)}/release%2F*`, { token: owner.token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await api.get(`${base(p)}/release%2F*`, { token: owner.token })).status).toBe(404);
    expect(await api.del(`${base(p)}/release%2F*`, { token: owner.token })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    // Its rules went with it: no rule is left without its branch.
    const orphans = await api.handle.db
      .selectFrom('protected_branch_access_levels as r')
      .leftJoin('protected_branches as b', 'b.id', 'r.protected_branch_id')
      .select('r.protected_branch_id')
      .where('b.id', 'is', null)
      .execute();
    expect(orphans).toEqual([]);
    expect((await protect(p, { name: 'release/*', push_access_level: 30 })).status).toBe(201);
  });

  it('honours If-Unmodified-Since (412)', async () => {
    const p = await fresh();
    await protect(p, { name: 'main' });
    const res = await api.del(`${base(p)}/main`, { token: owner.token, headers: { 'If-Unmodified-Since': 'Mon, 01 Jan 2001 00:00:00 GMT' } });
    expect(res).toMatchObject({ status: 412, body: { message: '412 Precondition Failed' } });
  });
});

describe('PATCH /projects/:id/protected_branches/:name', () => {
  it('sets code_owner_approval_required (premium)', async () => {
    const p = await fresh();
    await protect(p, { name: 'main' });
    const res = await api.request('PATCH', `${base(p)}/main`, { token: owner.token, body: { code_owner_approval_required: true } });
    expect(res).toMatchObject({ status: 200, body: { name: 'main', code_owner_approval_required: true } });
    expect((await api.get(`${base(p)}/main`, { token: owner.token })).body.code_owner_approval_required).toBe(true);
    // Absent: false, GitLab's default.
    expect((await api.request('PATCH', `${base(p)}/main`, { token: owner.token, body: {} })).body.code_owner_approval_required).toBe(false);
    expect(await api.request('PATCH', `${base(p)}/nope`, { token: owner.token, body: { code_owner_approval_required: true } })).toMatchObject({
      status: 404,
      body: { message: '404 Not found' },
    });
  });

  it('takes code_owner_approval_required on protection too (premium)', async () => {
    const p = await fresh();
    expect((await protect(p, { name: 'main', code_owner_approval_required: true })).body.code_owner_approval_required).toBe(true);
  });
});

describe('plan tiers', () => {
  it('code_owner_approval_required (premium): below it, ignored on protection and PATCH is 403', async () => {
    const p = await fresh();
    await onPlan('starter', async () => {
      const res = await protect(p, { name: 'main', code_owner_approval_required: true });
      expect(res).toMatchObject({ status: 201, body: { code_owner_approval_required: false } });
      expect(await api.request('PATCH', `${base(p)}/main`, { token: owner.token, body: { code_owner_approval_required: true } })).toMatchObject({
        status: 403,
        body: { message: "Feature 'Code Owner Approval Required' is not enabled" },
      });
    });
    expect((await api.get(`${base(p)}/main`, { token: owner.token })).body.code_owner_approval_required).toBe(false);
  });

  it('protected_refs_for_users (starter): on free, no user or group rules, no user_id/group_id, none of EE', async () => {
    const p = await fresh();
    await onPlan('free', async () => {
      const res = await protect(p, { name: 'main', push_access_level: 30, allowed_to_push: [{ user_id: anna.user.id }], unprotect_access_level: 60 });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ name: 'main', push_access_levels: [{ access_level: 30, access_level_description: 'Developers + Maintainers' }], merge_access_levels: [{ access_level: 40, access_level_description: 'Maintainers' }] });
      // CE has no PATCH route.
      expect(await api.request('PATCH', `${base(p)}/main`, { token: owner.token, body: {} })).toMatchObject({ status: 404, body: { error: '404 Not Found' } });
    });
  });
});

describe('deletions elsewhere', () => {
  it("drops a deleted project's protected branches and a deleted user's rules", async () => {
    const p = await fresh();
    const bert = await api.createUser({ name: 'Bert' });
    await addMember(api, 'projects', p.id, bert.user.id, 30);
    await protect(p, { name: 'main', allowed_to_push: [{ user_id: bert.user.id }] });
    expect((await api.del(`/users/${bert.user.id}`)).status).toBe(204);
    const rules = () => api.handle.db.selectFrom('protected_branch_access_levels').select('user_id').where('user_id', '=', bert.user.id).execute();
    for (let i = 0; i < 100 && (await rules()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await rules()).toEqual([]);

    expect((await api.del(`/projects/${p.id}`, { token: owner.token })).status).toBe(202);
    const rows = () => api.handle.db.selectFrom('protected_branches').select('id').where('project_id', '=', p.id).execute();
    for (let i = 0; i < 100 && (await rows()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await rows()).toEqual([]);
  });

  it('rebuilds the same rows from the log (replay equivalence)', async () => {
    await expectReplayEquivalence(api.handle, [protectedBranchesProjector]);
  });
});

describe('POST /projects/:id/protected_branches: names PostgreSQL cannot index (issue 20, item 4)', () => {
  it('refuses a name with a component past 255 bytes (git keeps a ref as a file) as "name is invalid", and appends nothing', async () => {
    const project = await createProject(api, { token: owner.token });
    const before = (await api.get(base(project))).body.length;
    for (const name of ['x'.repeat(1024 * 1024), `release/${'é'.repeat(128)}`, 'y'.repeat(256), `${'a/'.repeat(600)}b`]) {
      expect(await protect(project, { name })).toMatchObject({ status: 400, body: { error: 'name is invalid' } });
    }
    expect((await api.get(base(project))).body).toHaveLength(before);
    const longest = `release/${'z'.repeat(255)}`;
    expect(await protect(project, { name: longest })).toMatchObject({ status: 201, body: { name: longest } });
  });
});

/**
 * Who may read and manage protected branches (GitLab: `before { authorize_admin_project }`
 * on every endpoint, reads included — maintainers, owners and administrators; a project the
 * caller cannot see is 404, one they see without the ability 403, anonymous callers too).
 */
describe('permissions', () => {
  type Visibility = 'private' | 'public';

  const outsiders = (ok: number) => ({
    private: { anonymous: 404, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: ok, owner: ok, admin: ok },
    public: { anonymous: 403, nonMember: 403 },
  });

  const TABLE: MatrixTable<Role, Visibility> = {
    'GET /projects/:id/protected_branches': outsiders(200),
    'GET /projects/:id/protected_branches/:name': outsiders(200),
    'POST /projects/:id/protected_branches': outsiders(201),
    'PATCH /projects/:id/protected_branches/:name': outsiders(200),
    'DELETE /projects/:id/protected_branches/:name': outsiders(204),
  };

  let callers: Callers;
  const projects = new Map<Visibility, number>();
  let counter = 0;

  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'public'] as const) projects.set(visibility, await sourceWithRoles(api, callers, 'projects', visibility));
  });

  permissionMatrix(TABLE, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const project = projects.get(visibility)!;
    const name = `matrix-${++counter}/*`;
    // Each call gets its own protected branch, made by root (POST makes it itself).
    if (method !== 'POST') {
      const made = await api.post(`/projects/${project}/protected_branches`, { name });
      if (made.status !== 201) throw new Error(`POST protected_branches: ${made.status} ${made.text}`);
    }
    const url = path.replace(':id', String(project)).replace(':name', encodeURIComponent(name));
    const token = callers[caller].token;
    const res = await api.request(method, url, { token, ...(method === 'POST' ? { body: { name } } : method === 'PATCH' ? { body: { code_owner_approval_required: true } } : {}) });
    return res.status;
  });
});
