import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { onPlan, startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const base = (groupId: number) => `/groups/${groupId}/epics`;
const create = (groupId: number, body: Record<string, unknown>, token?: string | null) => api.post(base(groupId), body, token === undefined ? {} : { token });
const ids = (body: any[]) => body.map((e) => e.id);

const ADMIN_FIELDS = [
  'start_date_is_fixed', 'start_date_fixed', 'start_date_from_inherited_source', 'start_date_from_milestones',
  'due_date_is_fixed', 'due_date_fixed', 'due_date_from_inherited_source', 'due_date_from_milestones', 'web_edit_url',
];

describe('POST /groups/:id/epics', () => {
  it('creates an epic with the next iid of its group, its labels and fixed dates, and appends EpicCreated', async () => {
    const group = await createGroup(api);
    const res = await create(group.id, { title: 'Roadmap', description: 'Q3', labels: 'b, a,,a', due_date_fixed: '2018-07-17', due_date_is_fixed: true, start_date_fixed: '2018-07-01' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number), iid: 1, group_id: group.id, parent_id: null, title: 'Roadmap', description: 'Q3',
      author: expect.objectContaining({ username: 'root' }),
      start_date: null, start_date_is_fixed: false, start_date_fixed: '2018-07-01', start_date_from_inherited_source: null, start_date_from_milestones: null,
      end_date: '2018-07-17', due_date: '2018-07-17', due_date_is_fixed: true, due_date_fixed: '2018-07-17', due_date_from_inherited_source: null, due_date_from_milestones: null,
      state: 'opened',
      web_edit_url: `/groups/${group.full_path}/-/epics/1`,
      web_url: `${api.url}/groups/${group.full_path}/-/epics/1`,
      references: { short: '&1', relative: '&1', full: `${group.full_path}&1` },
      reference: '&1',
      created_at: expect.any(String), updated_at: expect.any(String), closed_at: null,
      labels: ['a', 'b'], upvotes: 0, downvotes: 0,
    });
    expect(await api.events(`epic-${res.body.id}`)).toMatchObject([{ type: 'EpicCreated', data: { iid: 1, group_id: group.id, labels: ['a', 'b'] } }]);
    expect((await create(group.id, { title: 'Second' })).body.iid).toBe(2);
    // iids are per group.
    const other = await createGroup(api);
    expect((await create(other.id, { title: 'Elsewhere' })).body.iid).toBe(1);
  });

  it('never hands out an iid twice, not even after a deletion, nor to concurrent creations', async () => {
    const group = await createGroup(api);
    const first = (await create(group.id, { title: 'one' })).body;
    expect((await api.del(`${base(group.id)}/${first.iid}`)).status).toBe(204);
    expect((await create(group.id, { title: 'two' })).body.iid).toBe(2);
    const many = await Promise.all(Array.from({ length: 6 }, (_, i) => create(group.id, { title: `c${i}` })));
    expect(many.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(many.map((r) => r.body.iid).sort((a, b) => a - b)).toEqual([3, 4, 5, 6, 7, 8]);
  });

  it("answers Grape's errors and the model's, and writes nothing then", async () => {
    const group = await createGroup(api);
    expect(await create(group.id, { description: 'x' })).toMatchObject({ status: 400, body: { error: 'title is missing' } });
    expect(await create(group.id, { title: 'x', start_date_is_fixed: 'maybe', due_date_fixed: 'someday' })).toMatchObject({
      status: 400, body: { error: 'start_date_is_fixed is invalid, due_date_fixed is invalid' },
    });
    expect(await create(group.id, { title: ' ' })).toMatchObject({ status: 400, body: { message: { title: ["can't be blank"] } } });
    expect(await create(group.id, { title: 'x'.repeat(256) })).toMatchObject({ status: 400, body: { message: { title: ['is too long (maximum is 255 characters)'] } } });
    expect(await create(group.id, { title: 'x', description: 'd'.repeat(1_048_577) })).toMatchObject({
      status: 400, body: { message: { description: ['is too long (maximum is 1048576 characters)'] } },
    });
    expect((await api.get(base(group.id))).body).toEqual([]);
    // The limit itself is allowed.
    expect((await create(group.id, { title: 'x', description: 'd'.repeat(1_048_576) })).status).toBe(201);
  });

  it('takes a parent in the same group or an ancestor, and refuses others', async () => {
    const top = await createGroup(api);
    const sub = await createGroup(api, { parent: top });
    const sibling = await createGroup(api);
    const parent = (await create(top.id, { title: 'parent' })).body;
    const child = await create(sub.id, { title: 'child', parent_id: parent.id });
    expect(child).toMatchObject({ status: 201, body: { parent_id: parent.id } });
    const invalid = { status: 400, body: { message: { parent: ['The parent is not valid'] } } };
    // The parent's group must contain the child's: a subgroup's epic cannot parent the top group's.
    expect(await create(top.id, { title: 'x', parent_id: child.body.id })).toMatchObject(invalid);
    expect(await create(sibling.id, { title: 'x', parent_id: parent.id })).toMatchObject(invalid);
    expect(await create(top.id, { title: 'x', parent_id: 99999999 })).toMatchObject(invalid);
    // Epic::MAX_HIERARCHY_DEPTH: a fourth level is the last.
    let tip = child.body;
    const third = (await create(sub.id, { title: 'third', parent_id: tip.id })).body;
    tip = (await create(sub.id, { title: 'fourth', parent_id: third.id })).body;
    expect(tip.parent_id).toBe(third.id);
    expect(await create(sub.id, { title: 'fifth', parent_id: tip.id })).toMatchObject(invalid);
  });
});

describe('inherited dates', () => {
  it("come from the children's dates, up the tree, unless fixed; deprecated aliases follow", async () => {
    const group = await createGroup(api);
    const root = (await create(group.id, { title: 'root' })).body;
    const mid = (await create(group.id, { title: 'mid', parent_id: root.id })).body;
    const a = (await create(group.id, { title: 'a', parent_id: mid.id, start_date_fixed: '2020-03-01', start_date_is_fixed: true, due_date_fixed: '2020-04-01', due_date_is_fixed: true })).body;
    await create(group.id, { title: 'b', parent_id: mid.id, start_date_fixed: '2020-02-01', start_date_is_fixed: true });
    const show = async (epic: any) => (await api.get(`${base(group.id)}/${epic.iid}`)).body;
    expect(await show(mid)).toMatchObject({ start_date: '2020-02-01', start_date_from_inherited_source: '2020-02-01', start_date_from_milestones: '2020-02-01', due_date: '2020-04-01', end_date: '2020-04-01' });
    expect(await show(root)).toMatchObject({ start_date: '2020-02-01', due_date: '2020-04-01', start_date_is_fixed: false });
    // A fixed date wins over the inherited one, and changes flow up.
    expect((await api.put(`${base(group.id)}/${mid.iid}`, { due_date_fixed: '2021-01-01', due_date_is_fixed: true })).body).toMatchObject({ due_date: '2021-01-01', due_date_from_inherited_source: '2020-04-01' });
    expect(await show(root)).toMatchObject({ due_date: '2021-01-01' });
    expect((await api.put(`${base(group.id)}/${mid.iid}`, { due_date_is_fixed: false })).body).toMatchObject({ due_date: '2020-04-01' });
    // A child's deletion takes its dates away.
    expect((await api.del(`${base(group.id)}/${a.iid}`)).status).toBe(204);
    expect(await show(root)).toMatchObject({ start_date: '2020-02-01', due_date: null });
  });
});

describe('GET /groups/:id/epics', () => {
  let top: any;
  let sub: any;
  let epics: Record<string, any>;
  let callers: Callers;
  beforeAll(async () => {
    callers = await createCallers(api);
    top = await createGroup(api, { token: callers.owner.token! });
    sub = await createGroup(api, { parent: top, token: callers.owner.token! });
    const owner = callers.owner.token!;
    const reporter = callers.reporter.token!;
    expect((await api.post(`/groups/${top.id}/members`, { user_id: callers.reporter.user!.id, access_level: 20 })).status).toBe(201);
    epics = {};
    epics.first = (await create(top.id, { title: 'Alpha launch', description: 'the first one', labels: 'a-test,other' }, owner)).body;
    epics.second = (await create(top.id, { title: 'foo', description: 'bar baz', labels: 'a-test' }, reporter)).body;
    epics.inSub = (await create(sub.id, { title: 'sub epic' }, owner)).body;
    expect((await api.put(`${base(top.id)}/${epics.first.iid}`, { state_event: 'close' }, { token: owner })).status).toBe(200);
    // The first is now the last updated.
  });

  it('lists the group and its descendants, newest first, every state by default', async () => {
    const res = await api.get(base(top.id), { token: callers.owner.token! });
    expect(res.status).toBe(200);
    expect(ids(res.body)).toEqual([epics.inSub.id, epics.second.id, epics.first.id]);
    expect(res.headers.get('x-total')).toBe('3');
    expect(ids((await api.get(base(top.id), { query: { include_descendant_groups: false } })).body)).toEqual([epics.second.id, epics.first.id]);
    // Ancestors only on request.
    expect(ids((await api.get(base(sub.id))).body)).toEqual([epics.inSub.id]);
    expect(ids((await api.get(base(sub.id), { query: { include_ancestor_groups: true } })).body)).toEqual([epics.inSub.id, epics.second.id, epics.first.id]);
  });

  it('filters by state, author, labels, search and time, and orders as asked', async () => {
    const get = async (query: Record<string, string | number | boolean>) => ids((await api.get(base(top.id), { query })).body);
    expect(await get({ state: 'opened' })).toEqual([epics.inSub.id, epics.second.id]);
    expect(await get({ state: 'closed' })).toEqual([epics.first.id]);
    expect(await get({ author_id: callers.reporter.user!.id })).toEqual([epics.second.id]);
    expect(await get({ labels: 'a-test' })).toEqual([epics.second.id, epics.first.id]);
    expect(await get({ labels: 'a-test,other' })).toEqual([epics.first.id]);
    expect(await get({ search: 'launch' })).toEqual([epics.first.id]);
    expect(await get({ search: 'bar baz' })).toEqual([epics.second.id]);
    expect(await get({ search: 'FOO' })).toEqual([epics.second.id]);
    expect(await get({ search: '%' })).toEqual([]);
    expect(await get({ sort: 'asc' })).toEqual([epics.first.id, epics.second.id, epics.inSub.id]);
    expect(await get({ order_by: 'updated_at' })).toEqual([epics.first.id, epics.inSub.id, epics.second.id]);
    const created = new Date(epics.second.created_at);
    expect(await get({ created_after: created.toISOString() })).toEqual([epics.inSub.id, epics.second.id]);
    expect(await get({ created_before: created.toISOString() })).toEqual([epics.second.id, epics.first.id]);
    const closed = (await api.get(`${base(top.id)}/${epics.first.iid}`)).body.updated_at;
    expect(await get({ updated_after: closed })).toEqual([epics.first.id]);
    expect(await get({ updated_before: closed, sort: 'asc' })).toEqual([epics.first.id, epics.second.id, epics.inSub.id]);
    expect(await get({ created_after: '2999-01-01T00:00:00Z' })).toEqual([]);
  });

  it("answers Grape's errors for bad values", async () => {
    expect(await api.get(base(top.id), { query: { state: 'merged', order_by: 'title', sort: 'up' } })).toMatchObject({
      status: 400, body: { error: 'order_by does not have a valid value, sort does not have a valid value, state does not have a valid value' },
    });
    expect(await api.get(base(top.id), { query: { author_id: 'x', created_after: 'soon', include_descendant_groups: 'perhaps' } })).toMatchObject({
      status: 400, body: { error: 'author_id is invalid, created_after is invalid, include_descendant_groups is invalid' },
    });
  });

  it('shows the date sources only to those who may edit', async () => {
    const asGuest = await api.get(base(top.id), { token: callers.nonMember.token! });
    expect(asGuest.status).toBe(404);
    expect((await api.get(base(top.id), { token: callers.reporter.token! })).body.every((e: any) => ADMIN_FIELDS.every((f) => f in e))).toBe(true);
    await api.post(`/groups/${top.id}/members`, { user_id: callers.guest.user!.id, access_level: 10 });
    const guest = await api.get(base(top.id), { token: callers.guest.token! });
    expect(guest.status).toBe(200);
    expect(guest.body).toHaveLength(3);
    for (const epic of guest.body) for (const field of ADMIN_FIELDS) expect(epic).not.toHaveProperty(field);
    expect(guest.body[0]).toHaveProperty('due_date');
    expect(guest.body[0]).toHaveProperty('end_date');
  });
});

describe('GET /groups/:id/epics/:epic_iid', () => {
  it('shows one epic with `subscribed` (its author is a participant)', async () => {
    const group = await createGroup(api);
    const { body: epic } = await create(group.id, { title: 'one' });
    const res = await api.get(`${base(group.id)}/${epic.iid}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...epic, subscribed: true });
    expect(Object.keys(res.body).at(-1)).toBe('subscribed');
  });

  it('answers 403 for an iid the group does not have, as GitLab 12 (authorize! on a nil epic), and 400 for a non-integer', async () => {
    const group = await createGroup(api);
    expect(await api.get(`${base(group.id)}/999`)).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect(await api.get(`${base(group.id)}/abc`)).toMatchObject({ status: 400, body: { error: 'epic_iid is invalid' } });
    expect(await api.get(`/groups/999999999/epics/1`)).toMatchObject({ status: 404, body: { message: '404 Group Not Found' } });
  });
});

describe('PUT /groups/:id/epics/:epic_iid', () => {
  it('updates, closes and reopens; a change that changes nothing appends nothing', async () => {
    const group = await createGroup(api);
    const { body: epic } = await create(group.id, { title: 'one', labels: 'x' });
    const path = `${base(group.id)}/${epic.iid}`;
    const res = await api.put(path, { title: 'new title', description: 'new description', labels: 'label2', start_date_fixed: '2018-07-17', start_date_is_fixed: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ title: 'new title', description: 'new description', labels: ['label2'], start_date: '2018-07-17', start_date_fixed: '2018-07-17', start_date_is_fixed: true, due_date_fixed: null, due_date_is_fixed: false });
    const closed = await api.put(path, { state_event: 'close' });
    expect(closed.body).toMatchObject({ state: 'closed', closed_at: expect.any(String) });
    expect((await api.put(path, { state_event: 'close' })).body.state).toBe('closed');
    expect((await api.put(path, { state_event: 'reopen' })).body).toMatchObject({ state: 'opened', closed_at: null });
    expect((await api.put(path, { title: 'new title' })).status).toBe(200);
    expect((await api.events(`epic-${epic.id}`)).map((e) => e.type)).toEqual(['EpicCreated', 'EpicUpdated', 'EpicClosed', 'EpicReopened']);
  });

  it('needs one of its parameters; start_date and end_date are no longer among them', async () => {
    const group = await createGroup(api);
    const { body: epic } = await create(group.id, { title: 'one' });
    const missing = 'title, description, start_date_fixed, start_date_is_fixed, due_date_fixed, due_date_is_fixed, labels, state_event are missing, at least one parameter must be provided';
    expect(await api.put(`${base(group.id)}/${epic.iid}`, {})).toMatchObject({ status: 400, body: { error: missing } });
    expect(await api.put(`${base(group.id)}/${epic.iid}`, { start_date: '2020-01-01', end_date: '2020-02-01' })).toMatchObject({ status: 400, body: { error: missing } });
    expect(await api.put(`${base(group.id)}/${epic.iid}`, { state_event: 'merge' })).toMatchObject({ status: 400, body: { error: 'state_event does not have a valid value' } });
    expect(await api.put(`${base(group.id)}/${epic.iid}`, { title: '' })).toMatchObject({ status: 400, body: { message: { title: ["can't be blank"] } } });
    expect(await api.put(`${base(group.id)}/999`, { title: 'x' })).toMatchObject({ status: 403 });
  });
});

describe('DELETE /groups/:id/epics/:epic_iid', () => {
  it('deletes the epic and, as GitLab 12 cascades, its descendants', async () => {
    const group = await createGroup(api);
    const parent = (await create(group.id, { title: 'p' })).body;
    const child = (await create(group.id, { title: 'c', parent_id: parent.id })).body;
    const grandchild = (await create(group.id, { title: 'g', parent_id: child.id })).body;
    const other = (await create(group.id, { title: 'o' })).body;
    const res = await api.del(`${base(group.id)}/${parent.iid}`);
    expect(res.status).toBe(204);
    expect(ids((await api.get(base(group.id))).body)).toEqual([other.id]);
    for (const epic of [parent, child, grandchild]) expect((await api.events(`epic-${epic.id}`)).at(-1)!.type).toBe('EpicDeleted');
    expect(await api.del(`${base(group.id)}/${parent.iid}`)).toMatchObject({ status: 403 });
  });
});

describe('the plan', () => {
  it('answers 403 below ultimate, after the group is found', async () => {
    const group = await createGroup(api);
    const { body: epic } = await create(group.id, { title: 'one' });
    await onPlan(api, 'premium', async () => {
      for (const [method, path] of [
        ['GET', base(group.id)], ['GET', `${base(group.id)}/${epic.iid}`], ['POST', base(group.id)], ['PUT', `${base(group.id)}/${epic.iid}`],
        ['DELETE', `${base(group.id)}/${epic.iid}`], ['POST', `${base(group.id)}/${epic.iid}/todo`],
      ] as const) {
        expect(await api.request(method, path, method === 'GET' ? {} : { body: { title: 'x' } }), `${method} ${path}`).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
      }
      expect((await api.get('/groups/999999999/epics')).status).toBe(404);
    });
  });
});

describe('activity', () => {
  it("records an epic's creation, closing and reopening as the group's events", async () => {
    const { token, user } = await api.createUser({}, ['api']);
    const group = await createGroup(api, { token });
    const { body: epic } = await create(group.id, { title: 'Launch' }, token);
    await api.put(`${base(group.id)}/${epic.iid}`, { state_event: 'close' }, { token });
    await api.put(`${base(group.id)}/${epic.iid}`, { state_event: 'reopen' }, { token });
    await api.put(`${base(group.id)}/${epic.iid}`, { title: 'Renamed' }, { token });
    const events = (await api.get(`/users/${user.id}/events`, { token })).body.filter((e: any) => e.target_type === 'Epic');
    expect(events.map((e: any) => [e.action_name, e.target_id, e.target_iid, e.target_title, e.project_id])).toEqual([
      ['opened', epic.id, 1, 'Launch', null],
      ['closed', epic.id, 1, 'Launch', null],
      ['opened', epic.id, 1, 'Launch', null],
    ].reverse());
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'public';

// Authentication first; a private group of others is 404; reporters create and edit, owners delete.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /groups/:id/epics':                    { private: { anonymous: 401, nonMember: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200, blocked: 403 }, public: { anonymous: 401, nonMember: 200, external: 200, guest: 200 } },
  'GET /groups/:id/epics/:epic_iid':          { private: { anonymous: 401, nonMember: 404, guest: 200, reporter: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 200, external: 200 } },
  'POST /groups/:id/epics':                   { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201 }, public: { anonymous: 401, nonMember: 403, guest: 403, reporter: 201 } },
  'PUT /groups/:id/epics/:epic_iid':          { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 }, public: { anonymous: 401, nonMember: 403, guest: 403, reporter: 200 } },
  'DELETE /groups/:id/epics/:epic_iid':       { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 403, owner: 204, admin: 204 }, public: { anonymous: 401, nonMember: 403, maintainer: 403, owner: 204 } },
  'POST /groups/:id/epics/:epic_iid/todo':    { private: { anonymous: 401, nonMember: 404, guest: 201, reporter: 201, owner: 201, admin: 201 }, public: { anonymous: 401, nonMember: 201, external: 201 } },
};

describe('permissions', () => {
  let callers: Callers;
  const groups = new Map<Visibility, number>();
  let counter = 0;
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'groups', visibility);
      groups.set(visibility, id);
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const groupId = groups.get(visibility)!;
    // Every call gets an epic of its own, made by root.
    const epic = (await create(groupId, { title: `epic-${++counter}` })).body;
    const url = path.replace(':id', String(groupId)).replace(':epic_iid', String(epic.iid));
    const body = method === 'POST' && !path.endsWith('/todo') ? { title: `made-${counter}` } : method === 'PUT' ? { title: 'changed' } : undefined;
    return (await api.request(method, url, { token: callers[caller].token, ...(body ? { body } : {}) })).status;
  });
});
