import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, eventually, settled, type ProjectFixture } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { onPlan, startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const boardsUrl = (projectId: number) => `/projects/${projectId}/boards`;
const listsUrl = (projectId: number, boardId: number) => `/projects/${projectId}/boards/${boardId}/lists`;

async function label(projectId: number, name: string, color = '#FF0000', token?: string) {
  const res = await api.post(`/projects/${projectId}/labels`, { name, color }, token === undefined ? {} : { token });
  if (res.status !== 201) throw new Error(`POST labels: ${res.status} ${res.text}`);
  return res.body as { id: number; name: string; color: string; description: string | null; description_html: string; text_color: string };
}
async function board(projectId: number, name = 'Development') {
  const res = await api.post(boardsUrl(projectId), { name });
  if (res.status !== 201) throw new Error(`POST boards: ${res.status} ${res.text}`);
  return res.body as { id: number };
}
async function list(projectId: number, boardId: number, labelId: number) {
  const res = await api.post(listsUrl(projectId, boardId), { label_id: labelId });
  if (res.status !== 201) throw new Error(`POST lists: ${res.status} ${res.text}`);
  return res.body as { id: number; position: number };
}
const positions = async (projectId: number, boardId: number) => (await api.get(listsUrl(projectId, boardId))).body.map((l: any) => [l.label.name, l.position]);
const labelBasic = (l: Awaited<ReturnType<typeof label>>) => ({ id: l.id, name: l.name, color: l.color, description: l.description, description_html: l.description_html, text_color: l.text_color });

// ───────────────────────────── Boards ─────────────────────────────

describe('GET /projects/:id/boards', () => {
  it("lists no board for a project that never had one: GitLab's API does not make the first (the web UI's board page does)", async () => {
    const project = await createProject(api);
    const res = await api.get(boardsUrl(project.id));
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(res.headers.get('x-total')).toBe('0');
  });

  it('answers 401 without a token, 404 for a project the caller cannot see', async () => {
    const project = await createProject(api);
    expect(await api.get(boardsUrl(project.id), { token: null })).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    const stranger = await api.createUser();
    expect(await api.get(boardsUrl(project.id), { token: stranger.token })).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });
});

describe('POST /projects/:id/boards (EE)', () => {
  let project: ProjectFixture;
  beforeAll(async () => {
    project = await createProject(api);
  });

  it('creates a board with its (hidden) backlog and closed lists, and appends BoardCreated', async () => {
    const res = await api.post(boardsUrl(project.id), { name: 'Sprint' });
    expect(res.status).toBe(201);
    const basic = (await api.get('/projects', { query: { simple: true, search: project.path } })).body.find((p: any) => p.id === project.id);
    expect(res.body).toEqual({ id: expect.any(Number), project: basic, lists: [], name: 'Sprint', group: null, milestone: null, assignee: null, labels: [], weight: null });
    const events = await api.events(`board-${res.body.id}`);
    expect(events).toMatchObject([{ type: 'BoardCreated', data: { id: res.body.id, project_id: project.id, name: 'Sprint', backlog_list_id: expect.any(Number), closed_list_id: expect.any(Number) } }]);
    const { rows } = await sql<{ list_type: string; position: number | null }>`select list_type, position from board_lists where board_id = ${res.body.id} order by id`.execute(api.handle.db);
    expect(rows).toEqual([{ list_type: 'backlog', position: null }, { list_type: 'closed', position: null }]);
    expect((await api.get(`${boardsUrl(project.id)}/${res.body.id}`)).body).toEqual(res.body);
  });

  it("answers Grape's errors first, then the project", async () => {
    expect(await api.post(boardsUrl(project.id), {})).toMatchObject({ status: 400, body: { error: 'name is missing' } });
    expect(await api.post(boardsUrl(999999), { name: 'x' })).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });
});

describe('on GitLab CE (the free plan)', () => {
  it('answers 405 to the methods only EE has, and shows CE fields', async () => {
    const project = await createProject(api);
    const made = await board(project.id);
    const bug = await label(project.id, 'bug');
    const bugList = await list(project.id, made.id, bug.id);
    await onPlan(api, 'free', async () => {
      for (const [method, path] of [['POST', boardsUrl(project.id)], ['PUT', `${boardsUrl(project.id)}/${made.id}`], ['DELETE', `${boardsUrl(project.id)}/${made.id}`]] as const) {
        const res = await api.request(method, path, { body: { name: 'x' } });
        expect(res).toMatchObject({ status: 405, body: { error: '405 Not Allowed' } });
        expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
      }
      const res = await api.get(`${boardsUrl(project.id)}/${made.id}`);
      expect(Object.keys(res.body)).toEqual(['id', 'project', 'lists']);
      expect(res.body.lists).toEqual([{ id: bugList.id, label: labelBasic(bug), position: 0 }]);
    });
  });
});

describe('PUT /projects/:id/boards/:board_id (EE)', () => {
  let project: ProjectFixture;
  let made: { id: number };
  let bug: Awaited<ReturnType<typeof label>>;
  let ux: Awaited<ReturnType<typeof label>>;
  beforeAll(async () => {
    project = await createProject(api);
    made = await board(project.id);
    bug = await label(project.id, 'bug');
    ux = await label(project.id, 'ux', '#00FF00');
  });

  it('renames and scopes the board: milestone, assignee, labels by title, weight', async () => {
    const milestone = (await api.post(`/projects/${project.id}/milestones`, { title: 'v1' })).body;
    const assignee = await api.createUser();
    const res = await api.put(`${boardsUrl(project.id)}/${made.id}`, { name: 'Renamed', milestone_id: milestone.id, assignee_id: assignee.user.id, labels: 'ux, bug,nope', weight: 3 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: made.id, name: 'Renamed', weight: 3, labels: [labelBasic(ux), labelBasic(bug)] });
    expect(res.body.milestone).toEqual((await api.get(`/projects/${project.id}/milestones/${milestone.id}`)).body);
    expect(res.body.assignee).toEqual({ id: assignee.user.id, name: assignee.user.name, username: assignee.user.username, state: 'active', avatar_url: expect.any(String), web_url: expect.any(String) });
    expect((await api.events(`board-${made.id}`)).at(-1)).toMatchObject({ type: 'BoardUpdated', data: { changes: { name: 'Renamed', milestone_id: milestone.id, assignee_id: assignee.user.id, label_ids: [ux.id, bug.id], weight: 3 } } });
  });

  it('keeps the special milestones Upcoming and Started, and drops an assignee or milestone that does not exist', async () => {
    const upcoming = await api.put(`${boardsUrl(project.id)}/${made.id}`, { milestone_id: -2, assignee_id: 999999 });
    expect(upcoming.body).toMatchObject({ milestone: { title: 'Upcoming' }, assignee: null });
    expect((await api.put(`${boardsUrl(project.id)}/${made.id}`, { milestone_id: -3 })).body.milestone).toEqual({ title: 'Started' });
    expect((await api.put(`${boardsUrl(project.id)}/${made.id}`, { milestone_id: 999999 })).body.milestone).toBeNull();
  });

  it('changes nothing when nothing changes (no event), and answers 404 for another board', async () => {
    const before = (await api.events(`board-${made.id}`)).length;
    expect((await api.put(`${boardsUrl(project.id)}/${made.id}`, {})).status).toBe(200);
    expect(await api.events(`board-${made.id}`)).toHaveLength(before);
    expect(await api.put(`${boardsUrl(project.id)}/999999`, { name: 'x' })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.put(`${boardsUrl(project.id)}/abc`, { name: 'x' })).toMatchObject({ status: 400, body: { error: 'board_id is invalid' } });
  });
});

describe('DELETE /projects/:id/boards/:board_id (EE)', () => {
  it('deletes the board and its lists (204), then answers 404', async () => {
    const project = await createProject(api);
    const made = await board(project.id);
    await list(project.id, made.id, (await label(project.id, 'bug')).id);
    expect((await api.del(`${boardsUrl(project.id)}/${made.id}`)).status).toBe(204);
    expect(await api.get(`${boardsUrl(project.id)}/${made.id}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get(listsUrl(project.id, made.id))).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect((await api.events(`board-${made.id}`)).map((e) => e.type)).toEqual(['BoardCreated', 'ListCreated', 'BoardDeleted']);
    const { rows } = await sql<{ n: string }>`select count(*) as n from board_lists where board_id = ${made.id}`.execute(api.handle.db);
    expect(rows[0]!.n).toBe('0');
  });

  it('answers 412 when the board changed after If-Unmodified-Since', async () => {
    const project = await createProject(api);
    const made = await board(project.id);
    expect((await api.del(`${boardsUrl(project.id)}/${made.id}`, { headers: { 'If-Unmodified-Since': 'Thu, 01 Jan 1970 00:00:00 GMT' } })).status).toBe(412);
  });
});

// ───────────────────────────── Lists ─────────────────────────────

describe('POST /projects/:id/boards/:board_id/lists', () => {
  let project: ProjectFixture;
  let made: { id: number };
  let bug: Awaited<ReturnType<typeof label>>;
  let ux: Awaited<ReturnType<typeof label>>;
  beforeAll(async () => {
    project = await createProject(api);
    made = await board(project.id);
    bug = await label(project.id, 'bug');
    ux = await label(project.id, 'ux', '#eeeeee');
  });

  it('creates label lists one after the other (201), and appends ListCreated', async () => {
    const first = await api.post(listsUrl(project.id, made.id), { label_id: bug.id });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ id: expect.any(Number), label: labelBasic(bug), position: 0, max_issue_count: 0, max_issue_weight: 0 });
    const second = await api.post(listsUrl(project.id, made.id), { label_id: ux.id });
    expect(second.body).toMatchObject({ label: { name: 'ux', text_color: '#333333' }, position: 1 });
    expect((await api.events(`board-${made.id}`)).at(-1)).toMatchObject({ type: 'ListCreated', data: { list_id: second.body.id, label_id: ux.id, position: 1 } });
    const board_ = (await api.get(`${boardsUrl(project.id)}/${made.id}`)).body;
    expect(board_.lists.map((l: any) => l.id)).toEqual([first.body.id, second.body.id]);
  });

  it('refuses a label the board has, one the project lacks, and a missing label_id', async () => {
    expect(await api.post(listsUrl(project.id, made.id), { label_id: bug.id })).toMatchObject({ status: 400, body: { message: { label_id: ['has already been taken'] } } });
    expect(await api.post(listsUrl(project.id, made.id), { label_id: 999999 })).toMatchObject({ status: 400, body: { message: { error: 'Label not found!' } } });
    const other = await createProject(api);
    const foreign = await label(other.id, 'foreign');
    expect(await api.post(listsUrl(project.id, made.id), { label_id: foreign.id })).toMatchObject({ status: 400, body: { message: { error: 'Label not found!' } } });
    expect(await api.post(listsUrl(project.id, made.id), {})).toMatchObject({ status: 400, body: { error: 'label_id is missing' } });
    expect(await api.post(listsUrl(project.id, 999999), { label_id: bug.id })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });

  it('checks the label before the ability: a guest gets 400 for an unknown label, 403 for a known one', async () => {
    const guest = await api.createUser();
    await api.post(`/projects/${project.id}/members`, { user_id: guest.user.id, access_level: 10 });
    expect(await api.post(listsUrl(project.id, made.id), { label_id: 999999 }, { token: guest.token })).toMatchObject({ status: 400, body: { message: { error: 'Label not found!' } } });
    expect(await api.post(listsUrl(project.id, made.id), { label_id: bug.id }, { token: guest.token })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
  });
});

describe('GET /projects/:id/boards/:board_id/lists', () => {
  it('lists the label lists by position with pagination headers; never the backlog or closed list', async () => {
    const project = await createProject(api);
    const made = await board(project.id);
    const lists = [];
    for (const name of ['a', 'b', 'c']) lists.push(await list(project.id, made.id, (await label(project.id, name)).id));
    const res = await api.get(listsUrl(project.id, made.id), { query: { per_page: 2 } });
    expect(res.status).toBe(200);
    expect(res.body.map((l: any) => l.id)).toEqual([lists[0]!.id, lists[1]!.id]);
    expect(res.headers.get('x-total')).toBe('3');
    expect((await api.get(`${listsUrl(project.id, made.id)}/${lists[2]!.id}`)).body).toMatchObject({ id: lists[2]!.id, position: 2, label: { name: 'c' } });
    const created = (await api.events(`board-${made.id}`))[0]!.data;
    for (const hidden of [created.backlog_list_id, created.closed_list_id]) {
      expect(await api.get(`${listsUrl(project.id, made.id)}/${hidden}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    }
    expect(await api.get(`${listsUrl(project.id, 999999)}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
});

describe('PUT and DELETE /projects/:id/boards/:board_id/lists/:list_id', () => {
  let project: ProjectFixture;
  let made: { id: number };
  let ids: number[];
  beforeAll(async () => {
    project = await createProject(api);
    made = await board(project.id);
    ids = [];
    for (const name of ['a', 'b', 'c', 'd']) ids.push((await list(project.id, made.id, (await label(project.id, name)).id)).id);
  });

  it('moves a list, the lists between shifting by one (Boards::Lists::MoveService)', async () => {
    const res = await api.put(`${listsUrl(project.id, made.id)}/${ids[0]}`, { position: 2 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: ids[0], position: 2, label: { name: 'a' } });
    expect(await positions(project.id, made.id)).toEqual([['b', 0], ['c', 1], ['a', 2], ['d', 3]]);
    await api.put(`${listsUrl(project.id, made.id)}/${ids[3]}`, { position: 0 });
    expect(await positions(project.id, made.id)).toEqual([['d', 0], ['b', 1], ['c', 2], ['a', 3]]);
    expect((await api.events(`board-${made.id}`)).at(-1)).toMatchObject({ type: 'ListMoved', data: { list_id: ids[3], from_position: 3, to_position: 0 } });
  });

  it('refuses the same position, a negative one and one past the last list (400)', async () => {
    for (const position of [0, -1, 4]) {
      expect(await api.put(`${listsUrl(project.id, made.id)}/${ids[3]}`, { position })).toMatchObject({ status: 400, body: { message: { error: 'List could not be moved!' } } });
    }
    expect(await api.put(`${listsUrl(project.id, made.id)}/${ids[3]}`, {})).toMatchObject({ status: 400, body: { error: 'position is missing' } });
    expect(await api.put(`${listsUrl(project.id, made.id)}/999999`, { position: 1 })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });

  it('deletes a list (204), the lists after it moving up (Boards::Lists::DestroyService)', async () => {
    expect((await api.del(`${listsUrl(project.id, made.id)}/${ids[1]}`)).status).toBe(204);
    expect(await positions(project.id, made.id)).toEqual([['d', 0], ['c', 1], ['a', 2]]);
    expect(await api.del(`${listsUrl(project.id, made.id)}/${ids[1]}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
});

describe("a list goes with its label (GitLab's lists.label_id foreign key, on delete cascade)", () => {
  it('removes the list without renumbering the others; later moves and new lists count the lists left', async () => {
    const project = await createProject(api);
    const made = await board(project.id);
    const labels = [];
    for (const name of ['a', 'b', 'c']) labels.push(await label(project.id, name));
    for (const l of labels) await list(project.id, made.id, l.id);
    await api.put(`${boardsUrl(project.id)}/${made.id}`, { labels: 'a,b' });
    expect((await api.del(`/projects/${project.id}/labels/a`)).status).toBe(204);
    expect(await positions(project.id, made.id)).toEqual([['b', 1], ['c', 2]]);
    expect((await api.get(`${boardsUrl(project.id)}/${made.id}`)).body.labels.map((l: any) => l.name)).toEqual(['b']);
    // Two lists are left: position 2 is past the last one.
    const c = (await api.get(listsUrl(project.id, made.id))).body[1];
    expect((await api.put(`${listsUrl(project.id, made.id)}/${c.id}`, { position: 2 })).status).toBe(400);
    expect((await api.put(`${listsUrl(project.id, made.id)}/${c.id}`, { position: 1 })).status).toBe(200);
    expect(await positions(project.id, made.id)).toEqual([['c', 1], ['b', 2]]);
    expect((await api.post(listsUrl(project.id, made.id), { label_id: (await label(project.id, 'd')).id })).body.position).toBe(3);
  });
});

describe("a project's deletion", () => {
  it('takes its boards and lists', async () => {
    const project = await createProject(api);
    const made = await board(project.id);
    await list(project.id, made.id, (await label(project.id, 'bug')).id);
    expect((await api.del(`/projects/${project.id}`)).status).toBe(202);
    const count = async () => Number((await sql<{ n: string }>`select (select count(*) from boards where project_id = ${project.id}) + (select count(*) from board_lists where project_id = ${project.id}) as n`.execute(api.handle.db)).rows[0]!.n);
    await eventually(async () => ((await count()) === 0 ? true : undefined));
  });
});

describe('the issues feature and archiving', () => {
  it('turns boards off with the issues feature (403 for members), and makes lists and boards read-only on an archived project', async () => {
    const project = await createProject(api);
    const made = await board(project.id);
    const bug = await label(project.id, 'bug');
    expect((await api.put(`/projects/${project.id}`, { issues_access_level: 'disabled' })).status).toBe(200);
    expect(await api.get(boardsUrl(project.id))).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect((await api.put(`/projects/${project.id}`, { issues_access_level: 'enabled' })).status).toBe(200);
    expect((await api.post(`/projects/${project.id}/archive`)).status).toBe(201);
    expect((await api.get(boardsUrl(project.id))).status).toBe(200);
    expect((await api.post(listsUrl(project.id, made.id), { label_id: bug.id })).status).toBe(403);
    expect((await api.put(`${boardsUrl(project.id)}/${made.id}`, { name: 'x' })).status).toBe(403);
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'public';

// guest_access or public_access reads; reporter_access writes; a private project of others is 404.
const READ = { private: { anonymous: 401, nonMember: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, admin: 200 }, public: { anonymous: 401, nonMember: 200, guest: 200 } };
const write = (ok: number) => ({ private: { anonymous: 401, nonMember: 404, guest: 403, reporter: ok, developer: ok, maintainer: ok, admin: ok }, public: { anonymous: 401, nonMember: 403, guest: 403, reporter: ok } });
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/boards':                               READ,
  'GET /projects/:id/boards/:board_id':                     READ,
  'POST /projects/:id/boards':                              write(201),
  'PUT /projects/:id/boards/:board_id':                     write(200),
  'DELETE /projects/:id/boards/:board_id':                  write(204),
  'GET /projects/:id/boards/:board_id/lists':               READ,
  'GET /projects/:id/boards/:board_id/lists/:list_id':      READ,
  'POST /projects/:id/boards/:board_id/lists':              write(201),
  'PUT /projects/:id/boards/:board_id/lists/:list_id':      write(200),
  'DELETE /projects/:id/boards/:board_id/lists/:list_id':   write(204),
};

describe('permissions', () => {
  let callers: Callers;
  const fixtures = new Map<Visibility, { projectId: number; labels: number[]; board: number; lists: number[] }>();
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'public'] as const) {
      const projectId = await sourceWithRoles(api, callers, 'projects', visibility);
      const labels = [(await label(projectId, 'a')).id, (await label(projectId, 'b')).id];
      const made = await board(projectId);
      const lists = [(await list(projectId, made.id, labels[0]!)).id, (await list(projectId, made.id, labels[1]!)).id];
      fixtures.set(visibility, { projectId, labels, board: made.id, lists });
    }
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const f = fixtures.get(visibility)!;
    // Reads use the shared board; each write gets a board of its own, made by root.
    let boardId = f.board;
    let listId = f.lists[0]!;
    if (method !== 'GET') {
      boardId = (await board(f.projectId)).id;
      if (method !== 'POST') listId = (await list(f.projectId, boardId, f.labels[0]!)).id;
      if (method === 'PUT') await list(f.projectId, boardId, f.labels[1]!);
    }
    const url = path.replace(':id', String(f.projectId)).replace(':board_id', String(boardId)).replace(':list_id', String(listId));
    const body = path.endsWith('/lists') ? { label_id: f.labels[0] } : path.endsWith(':list_id') ? { position: 1 } : { name: 'made' };
    const res = await api.request(method, url, { token: callers[caller].token, ...(method === 'GET' || method === 'DELETE' ? {} : { body }) });
    if (res.status === 404) expect(res.body).toEqual({ message: '404 Project Not Found' });
    return res.status;
  });
});
