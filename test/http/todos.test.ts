import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const epicOf = async (groupId: number, title: string) => (await api.post(`/groups/${groupId}/epics`, { title })).body;
const mark = (groupId: number, iid: number, token?: string) => api.post(`/groups/${groupId}/epics/${iid}/todo`, undefined, token ? { token } : {});

describe('POST /groups/:id/epics/:epic_iid/todo', () => {
  it('marks a todo (201, action marked, group and the whole epic); 304 while it is pending', async () => {
    const group = await createGroup(api);
    const epic = await epicOf(group.id, 'Launch');
    const res = await mark(group.id, epic.iid);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(Number),
      group: { id: group.id, name: group.name, path: group.path, kind: 'group', full_path: group.full_path, parent_id: null },
      author: expect.objectContaining({ username: 'root' }),
      action_name: 'marked',
      target_type: 'Epic',
      target: (await api.get(`/groups/${group.id}/epics`)).body[0],
      target_url: `${api.url}/groups/${group.full_path}/-/epics/${epic.iid}`,
      body: 'Launch',
      state: 'pending',
      created_at: expect.any(String),
    });
    expect(res.body).not.toHaveProperty('project');
    const again = await mark(group.id, epic.iid);
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    // Once done, it can be marked again.
    expect((await api.post(`/todos/${res.body.id}/mark_as_done`)).status).toBe(201);
    expect((await mark(group.id, epic.iid)).status).toBe(201);
  });

  it('answers 403 for an epic the group does not have, as GitLab 12', async () => {
    const group = await createGroup(api);
    expect(await mark(group.id, 42)).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
  });
});

describe('GET /todos', () => {
  let user: { id: number };
  let token: string;
  let top: any;
  let sub: any;
  let other: any;
  const todo: Record<string, any> = {};
  beforeAll(async () => {
    ({ user, token } = await api.createUser());
    top = await createGroup(api, { token });
    sub = await createGroup(api, { token, parent: top });
    other = await createGroup(api, { token });
    for (const [name, group] of [['top', top], ['sub', sub], ['other', other]] as const) {
      const epic = (await api.post(`/groups/${group.id}/epics`, { title: `epic in ${name}` }, { token })).body;
      todo[name] = (await mark(group.id, epic.iid, token)).body;
    }
    expect((await api.post(`/todos/${todo.other.id}/mark_as_done`, undefined, { token })).status).toBe(201);
  });

  it("lists the caller's pending todos, newest first", async () => {
    const res = await api.get('/todos', { token });
    expect(res.status).toBe(200);
    expect(res.body.map((t: any) => t.id)).toEqual([todo.sub.id, todo.top.id]);
    expect(res.headers.get('x-total')).toBe('2');
    // Root's list does not hold them.
    expect((await api.get('/todos')).body.map((t: any) => t.id)).not.toContain(todo.top.id);
  });

  it('filters by state, action, type, author, group (with its subgroups) and project', async () => {
    const list = async (query: Record<string, string | number | boolean>) => (await api.get('/todos', { token, query })).body.map((t: any) => t.id);
    expect(await list({ state: 'done' })).toEqual([todo.other.id]);
    expect(await list({ state: 'whatever' })).toEqual([todo.sub.id, todo.top.id]);
    expect(await list({ action: 'marked' })).toEqual([todo.sub.id, todo.top.id]);
    expect(await list({ action: 'assigned' })).toEqual([]);
    expect(await list({ action: 'nonsense' })).toEqual([todo.sub.id, todo.top.id]);
    expect(await list({ type: 'Epic' })).toEqual([todo.sub.id, todo.top.id]);
    expect(await list({ type: 'MergeRequest' })).toEqual([]);
    expect(await list({ author_id: user.id })).toEqual([todo.sub.id, todo.top.id]);
    expect(await list({ group_id: top.id })).toEqual([todo.sub.id, todo.top.id]);
    expect(await list({ group_id: sub.id })).toEqual([todo.sub.id]);
    expect(await list({ group_id: other.id, state: 'done' })).toEqual([todo.other.id]);
    const { body: project } = await api.post('/projects', { name: `p${Date.now()}` }, { token });
    expect(await list({ project_id: project.id })).toEqual([]);
  });

  it("answers TodosFinder's 404 for an author, project or group that does not exist", async () => {
    for (const query of [{ author_id: 99999999 }, { project_id: 99999999 }, { group_id: 99999999 }, { author_id: 'abc' }] as Record<string, string | number>[]) {
      expect(await api.get('/todos', { token, query })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    }
  });

  it('drops the todos of a deleted epic', async () => {
    const group = await createGroup(api, { token });
    const epic = (await api.post(`/groups/${group.id}/epics`, { title: 'gone' }, { token })).body;
    const { body: t } = await mark(group.id, epic.iid, token);
    expect((await api.get('/todos', { token, query: { group_id: group.id } })).body.map((x: any) => x.id)).toEqual([t.id]);
    expect((await api.del(`/groups/${group.id}/epics/${epic.iid}`, { token })).status).toBe(204);
    expect((await api.get('/todos', { token, query: { group_id: group.id } })).body).toEqual([]);
  });
});

describe('POST /todos/:id/mark_as_done', () => {
  it("marks one of the caller's todos done (201); another's is 404", async () => {
    const { token } = await api.createUser();
    const group = await createGroup(api);
    const epic = await epicOf(group.id, 'one');
    const { body: mine } = await mark(group.id, epic.iid);
    expect(await api.post(`/todos/${mine.id}/mark_as_done`, undefined, { token })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    const res = await api.post(`/todos/${mine.id}/mark_as_done`);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ ...mine, state: 'done' });
    expect((await api.post(`/todos/${mine.id}/mark_as_done`)).body.state).toBe('done');
    expect(await api.post('/todos/abc/mark_as_done')).toMatchObject({ status: 400, body: { error: 'id is invalid' } });
    expect(await api.post('/todos/99999999/mark_as_done')).toMatchObject({ status: 404 });
    const root = (await api.get('/user')).body;
    expect((await api.events(`todos-${root.id}`)).filter((e) => e.type === 'TodosMarkedDone' && e.data.ids.includes(mine.id))).toHaveLength(1);
  });
});

describe('POST /todos/mark_as_done', () => {
  it("marks every pending todo of the caller done (204), nobody else's", async () => {
    const a = await api.createUser();
    const b = await api.createUser();
    const group = await createGroup(api, { token: a.token, visibility: 'public' });
    for (const title of ['x', 'y']) {
      const epic = (await api.post(`/groups/${group.id}/epics`, { title }, { token: a.token })).body;
      expect((await mark(group.id, epic.iid, a.token)).status).toBe(201);
      expect((await mark(group.id, epic.iid, b.token)).status).toBe(201);
    }
    const res = await api.post('/todos/mark_as_done', undefined, { token: a.token });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await api.get('/todos', { token: a.token })).body).toEqual([]);
    expect((await api.get('/todos', { token: a.token, query: { state: 'done' } })).body).toHaveLength(2);
    expect((await api.get('/todos', { token: b.token })).body).toHaveLength(2);
    expect((await api.events(`todos-${a.user.id}`)).map((e) => e.type)).toEqual(['TodoCreated', 'TodoCreated', 'TodosMarkedDone']);
    // Nothing pending: nothing appended.
    expect((await api.post('/todos/mark_as_done', undefined, { token: a.token })).status).toBe(204);
    expect(await api.events(`todos-${a.user.id}`)).toHaveLength(3);
  });
});

describe('authentication', () => {
  it('answers 401 without a user', async () => {
    for (const [method, path] of [['GET', '/todos'], ['POST', '/todos/1/mark_as_done'], ['POST', '/todos/mark_as_done']] as const) {
      expect((await api.request(method, path, { token: null })).status).toBe(401);
    }
  });
});
