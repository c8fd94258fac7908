import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { onPlan, startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
let root: { id: number; name: string };
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  root = (await api.get('/user')).body;
});
afterAll(() => api.close());

/** The audit ids of records, newest first. */
const ids = (records: { id: number }[]) => records.map((r) => r.id);
const instanceFeed = async (query: Record<string, string | number> = {}) => {
  const res = await api.get('/audit_events', { query: { per_page: 100, ...query } });
  expect(res.status).toBe(200);
  return res.body as any[];
};
const IP = '127.0.0.1';

describe('GET /audit_events', () => {
  let alice: { id: number; name: string; username: string };
  let group: { id: number; full_path: string };
  let project: { id: number; path_with_namespace: string };
  let removed: { id: number; path_with_namespace: string };
  let records: any[];

  beforeAll(async () => {
    alice = (await api.createUser({ name: 'Alice Audit' })).user;
    group = await createGroup(api, { visibility: 'private' });
    expect((await api.post(`/groups/${group.id}/members`, { user_id: alice.id, access_level: 30 })).status).toBe(201);
    expect((await api.put(`/groups/${group.id}/members/${alice.id}`, { access_level: 40 })).status).toBe(200);
    expect((await api.put(`/groups/${group.id}`, { visibility: 'internal', description: 'not audited' })).status).toBe(200);
    expect((await api.del(`/groups/${group.id}/members/${alice.id}`)).status).toBe(204);
    project = await createProject(api, { group, visibility: 'private' });
    expect((await api.put(`/projects/${project.id}`, { path: 'renamed-audit', description: 'x' })).status).toBe(200);
    expect((await api.put(`/projects/${project.id}`, { description: 'only the description: no audit event' })).status).toBe(200);
    expect((await api.post(`/projects/${project.id}/members`, { user_id: alice.id, access_level: 20 })).status).toBe(201);
    expect((await api.put(`/users/${alice.id}`, { email: 'alice-new@example.com', skip_reconfirmation: true })).status).toBe(200);
    expect((await api.put(`/users/${alice.id}`, { password: 'another-password-1' })).status).toBe(200);
    removed = await createProject(api, { group });
    expect((await api.del(`/projects/${removed.id}`)).status).toBe(202);
    records = await instanceFeed({ created_after: new Date(Date.now() - 3600_000).toISOString().slice(0, 19) + 'Z' });
  });

  it('lists what GitLab EE 12 audits, newest first, with every detail', () => {
    const mine = records;
    const by = (entityType: string, id: number) => mine.filter((r) => r.entity_type === entityType && r.entity_id === id);
    const author = { author_name: root.name };
    const admin = { ip_address: IP };
    expect(by('Group', group.id).map((r) => r.details)).toEqual([
      { remove: 'user_access', ...author, target_id: alice.id, target_type: 'User', target_details: 'Alice Audit', ...admin, entity_path: group.full_path },
      { change: 'visibility', from: 'Private', to: 'Internal', ...author, target_id: group.id, target_type: 'Group', target_details: group.full_path, ...admin, entity_path: group.full_path },
      { change: 'access_level', from: 'Developer', to: 'Maintainer', ...author, target_id: alice.id, target_type: 'User', target_details: 'Alice Audit', ...admin, entity_path: group.full_path },
      { add: 'user_access', as: 'Developer', ...author, target_id: alice.id, target_type: 'User', target_details: 'Alice Audit', ...admin, entity_path: group.full_path },
      // The group's creator becomes its owner in the same command.
      { add: 'user_access', as: 'Owner', ...author, target_id: root.id, target_type: 'User', target_details: root.name, ...admin, entity_path: group.full_path },
      { add: 'group', ...author, target_id: group.full_path, target_type: 'Group', target_details: group.full_path, ...admin, entity_path: group.full_path },
    ]);
    const renamed = `${group.full_path}/renamed-audit`;
    const gone = removed.path_with_namespace;
    expect(by('Project', removed.id).map((r) => r.details)).toEqual([
      { remove: 'project', ...author, target_id: gone, target_type: 'Project', target_details: gone, ...admin, entity_path: gone },
      { add: 'project', ...author, target_id: gone, target_type: 'Project', target_details: gone, ...admin, entity_path: gone },
    ]);
    expect(by('Project', project.id).map((r) => r.details)).toEqual([
      { add: 'user_access', as: 'Reporter', ...author, target_id: alice.id, target_type: 'User', target_details: 'Alice Audit', ...admin, entity_path: renamed },
      { change: 'path', from: project.path_with_namespace, to: renamed, ...author, target_id: project.id, target_type: 'Project', target_details: renamed, ...admin, entity_path: renamed },
      { add: 'project', ...author, target_id: project.path_with_namespace, target_type: 'Project', target_details: project.path_with_namespace, ...admin, entity_path: project.path_with_namespace },
    ]);
    expect(by('User', alice.id).map((r) => r.details)).toEqual([
      { change: 'password', from: '', to: '', ...author, target_id: alice.id, target_type: 'User', target_details: 'Alice Audit', ...admin, entity_path: alice.username },
      {
        change: 'email address',
        from: `${alice.username}@example.com`,
        to: 'alice-new@example.com',
        ...author,
        target_id: alice.id,
        target_type: 'User',
        target_details: 'Alice Audit',
        ...admin,
        entity_path: alice.username,
      },
    ]);
  });

  it('gives the record fields of EE::API::Entities::AuditEvent, ids being global positions newest first', async () => {
    const record = records[0];
    expect(Object.keys(record)).toEqual(['id', 'author_id', 'entity_id', 'entity_type', 'details', 'created_at']);
    expect(record.author_id).toBe(root.id);
    expect(record.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(ids(records)).toEqual([...ids(records)].sort((a, b) => b - a));
    const positions = await api.handle.db.selectFrom('events').select('global_position').where('stream_id', '=', `project-${removed.id}`).where('event_type', '=', 'ProjectDeletionScheduled').execute();
    expect(records.find((r) => r.details.remove === 'project' && r.entity_id === removed.id).id).toBe(Number(positions[0]!.global_position));
  });

  it('filters by entity, and entity_id needs entity_type', async () => {
    const projectOnly = await instanceFeed({ entity_type: 'Project', entity_id: project.id });
    expect(projectOnly.map((r) => r.details.add ?? r.details.change)).toEqual(['user_access', 'path', 'project']);
    expect((await instanceFeed({ entity_type: 'User', entity_id: alice.id })).map((r) => r.details.change)).toEqual(['password', 'email address']);
    expect((await instanceFeed({ entity_type: 'Group', entity_id: group.id })).every((r) => r.entity_type === 'Group' && r.entity_id === group.id)).toBe(true);
    expect((await instanceFeed({ entity_type: 'Group' })).every((r) => r.entity_type === 'Group')).toBe(true);
    expect(await api.get('/audit_events', { query: { entity_id: project.id } })).toMatchObject({ status: 400, body: { error: 'entity_type is missing' } });
    expect(await api.get('/audit_events', { query: { entity_type: 'Issue' } })).toMatchObject({ status: 400, body: { error: 'entity_type does not have a valid value' } });
    expect(await api.get('/audit_events', { query: { entity_type: 'User', entity_id: 'x' } })).toMatchObject({ status: 400, body: { error: 'entity_id is invalid' } });
  });

  it('filters by creation time (inclusive bounds), and refuses what is not a time', async () => {
    const newest = records[0];
    expect(ids(await instanceFeed({ created_after: newest.created_at }))).toContain(newest.id);
    expect(await instanceFeed({ created_after: '2999-01-01T00:00:00Z' })).toEqual([]);
    expect(await instanceFeed({ created_before: '2000-01-01T00:00:00Z' })).toEqual([]);
    expect(ids(await instanceFeed({ created_before: newest.created_at }))).toContain(newest.id);
    expect(await api.get('/audit_events', { query: { created_after: 'yesterday' } })).toMatchObject({ status: 400, body: { error: 'created_after is invalid' } });
    expect(await api.get('/audit_events', { query: { created_before: '2020-02-30T00:00:00Z' } })).toMatchObject({ status: 400, body: { error: 'created_before is invalid' } });
  });

  it('pages with offset pagination headers', async () => {
    const all = await instanceFeed();
    const page = await api.get('/audit_events', { query: { per_page: 2, page: 2 } });
    expect(page.status).toBe(200);
    expect(ids(page.body)).toEqual(ids(all).slice(2, 4));
    expect(page.headers.get('x-total')).toBe(String(all.length));
    expect(page.headers.get('x-per-page')).toBe('2');
    expect(page.headers.get('x-page')).toBe('2');
    expect(page.headers.get('x-prev-page')).toBe('1');
    expect(page.headers.get('link')).toContain('rel="next"');
  });

  it('GET /audit_events/:id is one record; a position that is no audit event is 404', async () => {
    const record = records[1];
    expect(await api.get(`/audit_events/${record.id}`)).toMatchObject({ status: 200, body: record });
    const starred = await api.post(`/projects/${(await createProject(api)).id}/star`);
    expect(starred.status).toBe(201);
    const { position } = await api.handle.db.selectFrom('events').select((eb) => eb.fn.max('global_position').as('position')).executeTakeFirstOrThrow();
    expect(await api.get(`/audit_events/${position}`)).toMatchObject({ status: 404, body: { message: '404 Audit Event Not Found' } });
    expect(await api.get('/audit_events/99999999999999')).toMatchObject({ status: 404, body: { message: '404 Audit Event Not Found' } });
    expect(await api.get('/audit_events/abc')).toMatchObject({ status: 400, body: { error: 'id is invalid' } });
  });

  it('records the IP of the connection (X-Forwarded-For is not trusted, as the kernel records it)', async () => {
    const forged = await createGroup(api, {});
    await api.post(`/groups/${forged.id}/members`, { user_id: alice.id, access_level: 10 }, { headers: { 'X-Forwarded-For': '10.9.8.7' } });
    const [added] = await instanceFeed({ entity_type: 'Group', entity_id: forged.id });
    expect(added.details).toMatchObject({ add: 'user_access', as: 'Guest', ip_address: IP });
  });

  it('shows the administrator behind sudo (impersonated_by), the author being the user acted as', async () => {
    const res = await api.post('/groups', { name: 'sudo-made', path: `sudo-made-${process.pid}` }, { headers: { Sudo: alice.username } });
    expect(res.status).toBe(201);
    const [created] = (await instanceFeed({ entity_type: 'Group', entity_id: res.body.id })).filter((r) => r.details.add === 'group');
    expect(created).toMatchObject({ author_id: alice.id, details: { add: 'group', author_name: 'Alice Audit', impersonated_by: root.name } });
  });
});

describe('GET /groups/:id/audit_events', () => {
  it("lists the group's records only; another group's record is 404", async () => {
    const group = await createGroup(api, {});
    const other = await createGroup(api, {});
    const res = await api.get(`/groups/${group.id}/audit_events`);
    expect(res.status).toBe(200);
    expect(res.body.map((r: any) => [r.entity_type, r.entity_id, r.details.add])).toEqual([
      ['Group', group.id, 'user_access'],
      ['Group', group.id, 'group'],
    ]);
    expect(res.headers.get('x-total')).toBe('2');
    expect(await api.get(`/groups/${group.id}/audit_events/${res.body[0].id}`)).toMatchObject({ status: 200, body: res.body[0] });
    const [otherRecord] = (await api.get(`/groups/${other.id}/audit_events`)).body;
    expect(await api.get(`/groups/${group.id}/audit_events/${otherRecord.id}`)).toMatchObject({ status: 404, body: { message: '404 Audit Event Not Found' } });
    expect(await api.get(`/groups/${group.id}/audit_events/abc`)).toMatchObject({ status: 404, body: { message: '404 Audit Event Not Found' } });
    expect(await api.get(`/groups/${group.id}/audit_events`, { query: { created_after: '2999-01-01T00:00:00Z' } })).toMatchObject({ status: 200, body: [] });
    expect(await api.get(`/groups/${group.id}/audit_events`, { query: { created_before: 'soon' } })).toMatchObject({ status: 400, body: { error: 'created_before is invalid' } });
  });
});

describe('licences', () => {
  it.each([
    ['free', 403, 403],
    ['starter', 403, 200],
    ['premium', 200, 200],
    ['ultimate', 200, 200],
  ] as const)('on %s: instance %i, group %i', async (plan, instance, groupStatus) => {
    const group = await createGroup(api, {});
    await onPlan(api, plan, async () => {
      const all = await api.get('/audit_events');
      expect(all.status).toBe(instance);
      if (instance === 403) expect(all.body).toEqual({ message: '403 Forbidden' });
      const own = await api.get(`/groups/${group.id}/audit_events`);
      expect(own.status).toBe(groupStatus);
      if (groupStatus === 403) expect(own.body).toEqual({ message: '403 Forbidden' });
      // GitLab EE adds ip_address and entity_path only under admin_audit_log (premium).
      else expect(Object.keys(own.body[0].details).includes('ip_address')).toBe(plan !== 'starter');
    });
  });
});

describe('permissions', () => {
  let callers: Callers;
  const groups: Record<string, number> = {};
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'public'] as const) groups[visibility] = await sourceWithRoles(api, callers, 'groups', visibility);
  });

  const instance = { anonymous: 401, nonMember: 403, guest: 403, owner: 403, admin: 200, blocked: 403, external: 403 } as const;
  const table: MatrixTable<Role, 'private' | 'public'> = {
    'GET /audit_events': { private: instance },
    'GET /audit_events/:id': { private: instance },
    'GET /groups/:id/audit_events': {
      private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 200, admin: 200, blocked: 403, external: 404 },
      public: { anonymous: 401, nonMember: 403, guest: 403, maintainer: 403, owner: 200, admin: 200, external: 403 },
    },
    'GET /groups/:id/audit_events/:audit_event_id': {
      private: { anonymous: 401, nonMember: 404, maintainer: 403, owner: 200, admin: 200 },
      public: { nonMember: 403, owner: 200 },
    },
  };
  permissionMatrix(table, async ({ endpoint, caller, visibility }) => {
    const groupId = groups[visibility]!;
    const [first] = (await api.get(`/groups/${groupId}/audit_events`)).body;
    const path = endpoint
      .replace('/audit_events/:id', `/audit_events/${first.id}`)
      .replace(':audit_event_id', String(first.id))
      .replace(':id', String(groupId))
      .replace('GET ', '');
    return (await api.get(path, { token: callers[caller].token })).status;
  });
});
