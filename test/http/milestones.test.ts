import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, eventually, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const FIELDS = ['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'due_date', 'start_date', 'web_url'];
const base = (projectId: number) => `/projects/${projectId}/milestones`;
const create = (projectId: number, body: Record<string, unknown>, token?: string | null) => api.post(base(projectId), body, token === undefined ? {} : { token });
const eventTypes = async (id: number) => (await api.events(`milestone-${id}`)).map((e) => e.type);
const rowCount = async (projectId: number) =>
  Number((await sql<{ n: string }>`select count(*) as n from milestones where project_id = ${projectId}`.execute(api.handle.db)).rows[0]!.n);
const titles = (res: { body: any[] }) => res.body.map((m) => m.title);

describe('POST /projects/:id/milestones', () => {
  it('creates an active milestone with the next iid of the project, and appends MilestoneCreated', async () => {
    const project = await createProject(api);
    const res = await create(project.id, { title: ' v1.0 ', description: 'First', start_date: '2020-01-01', due_date: '2020-02-01' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(FIELDS);
    expect(res.body).toMatchObject({ iid: 1, project_id: project.id, title: 'v1.0', description: 'First', state: 'active', start_date: '2020-01-01', due_date: '2020-02-01' });
    expect(res.body.web_url).toBe(`${api.url}/${project.path_with_namespace}/-/milestones/1`);
    expect(res.body.created_at).toBe(res.body.updated_at);
    expect(await api.events(`milestone-${res.body.id}`)).toMatchObject([{ type: 'MilestoneCreated', data: { id: res.body.id, project_id: project.id, iid: 1, title: 'v1.0' } }]);

    const second = await create(project.id, { title: 'v2.0' });
    expect(second.body).toMatchObject({ iid: 2, description: null, start_date: null, due_date: null });
    // iids are per project, and never reused after a deletion.
    expect((await api.del(`${base(project.id)}/${second.body.id}`)).status).toBe(204);
    expect((await create(project.id, { title: 'v3.0' })).body.iid).toBe(3);
    const other = await createProject(api);
    expect((await create(other.id, { title: 'v1.0' })).body.iid).toBe(1);
  });

  it('gives concurrent creations distinct iids, and one of two racing for a title the error', async () => {
    const project = await createProject(api);
    const made = await Promise.all(Array.from({ length: 6 }, (_, i) => create(project.id, { title: `m${i}` })));
    expect(made.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(made.map((r) => r.body.iid).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    const racing = await Promise.all([create(project.id, { title: 'same' }), create(project.id, { title: 'same' })]);
    expect(racing.map((r) => r.status).sort()).toEqual([201, 400]);
    expect(await rowCount(project.id)).toBe(7);
  });

  it("answers Grape's parameter errors before looking at the project", async () => {
    const project = await createProject(api);
    expect(await create(project.id, {})).toMatchObject({ status: 400, body: { error: 'title is missing' } });
    expect(await create(project.id, { title: 'x', due_date: 'soon' })).toMatchObject({ status: 400, body: { error: 'due_date is invalid' } });
    expect(await create(999999, {})).toMatchObject({ status: 400, body: { error: 'title is missing' } });
    expect(await create(999999, { title: 'x' })).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    expect(await rowCount(project.id)).toBe(0);
  });

  it("validates as GitLab's model does, answers in its words, and writes nothing then", async () => {
    const project = await createProject(api);
    expect((await create(project.id, { title: 'v1.0' })).status).toBe(201);
    expect(await create(project.id, { title: 'v1.0' })).toMatchObject({
      status: 400,
      body: { message: 'Failed to create milestone {:title=>["already being used for another group or project milestone."]}' },
    });
    expect(await create(project.id, { title: '  ' })).toMatchObject({ status: 400, body: { message: 'Failed to create milestone {:title=>["can\'t be blank"]}' } });
    for (const due of ['2020-01-01', '2019-12-31']) {
      expect(await create(project.id, { title: 'dates', start_date: '2020-01-01', due_date: due })).toMatchObject({
        status: 400,
        body: { message: 'Failed to create milestone {:due_date=>["must be greater than start date"]}' },
      });
    }
    expect(await rowCount(project.id)).toBe(1);
    // Titles are case-sensitive and unique within a project only.
    expect((await create(project.id, { title: 'V1.0' })).status).toBe(201);
    expect((await create((await createProject(api)).id, { title: 'v1.0' })).status).toBe(201);
  });
});

describe('GET /projects/:id/milestones', () => {
  let project: { id: number };
  const ids: Record<string, number> = {};
  beforeAll(async () => {
    project = await createProject(api);
    const specs = [
      { title: 'Gamma', due_date: '2020-03-01' },
      { title: 'Alpha', description: 'the release candidate' },
      { title: 'Beta', due_date: '2020-01-01' },
      { title: 'Delta', due_date: '2020-03-01' },
      { title: 'rc_1' },
    ];
    for (const spec of specs) {
      const res = await create(project.id, spec);
      expect(res.status).toBe(201);
      ids[spec.title] = res.body.iid;
    }
    expect((await api.put(`${base(project.id)}/${(await api.get(base(project.id), { query: { title: 'Delta' } })).body[0].id}`, { state_event: 'close' })).status).toBe(200);
  });

  it('orders as MilestonesFinder does (due date, none last, then title), paginated', async () => {
    const res = await api.get(base(project.id), { query: { per_page: 2 } });
    expect(res.status).toBe(200);
    expect(titles(res)).toEqual(['Beta', 'Delta']);
    expect(Object.keys(res.body[0])).toEqual(FIELDS);
    expect(res.headers.get('x-total')).toBe('5');
    expect(res.headers.get('x-next-page')).toBe('2');
    expect(titles(await api.get(base(project.id)))).toEqual(['Beta', 'Delta', 'Gamma', 'Alpha', 'rc_1']);
  });

  it('filters by state, iids, exact title and search', async () => {
    expect(titles(await api.get(base(project.id), { query: { state: 'active' } }))).toEqual(['Beta', 'Gamma', 'Alpha', 'rc_1']);
    expect(titles(await api.get(base(project.id), { query: { state: 'closed' } }))).toEqual(['Delta']);
    expect(titles(await api.get(base(project.id), { query: { iids: [ids.Alpha!, ids.Beta!] } }))).toEqual(['Beta', 'Alpha']);
    expect(titles(await api.get(base(project.id), { query: { iids: `${ids.Gamma},${ids.Alpha}` } }))).toEqual(['Gamma', 'Alpha']);
    expect(titles(await api.get(base(project.id), { query: { title: 'Alpha' } }))).toEqual(['Alpha']);
    expect(titles(await api.get(base(project.id), { query: { title: 'alpha' } }))).toEqual([]);
    // Search: title or description, case-insensitive; LIKE's wildcards are plain characters.
    expect(titles(await api.get(base(project.id), { query: { search: 'CANDIDATE' } }))).toEqual(['Alpha']);
    expect(titles(await api.get(base(project.id), { query: { search: 'elt' } }))).toEqual(['Delta']);
    expect(titles(await api.get(base(project.id), { query: { search: 'rc_' } }))).toEqual(['rc_1']);
    expect(titles(await api.get(base(project.id), { query: { search: '%%%' } }))).toEqual([]);
  });

  it("answers Grape's errors for bad filters", async () => {
    expect(await api.get(base(project.id), { query: { state: 'opened' } })).toMatchObject({ status: 400, body: { error: 'state does not have a valid value' } });
    expect(await api.get(base(project.id), { query: { iids: 'a,b' } })).toMatchObject({ status: 400, body: { error: 'iids is invalid' } });
  });
});

describe('GET /projects/:id/milestones/:milestone_id', () => {
  it('shows one milestone by id', async () => {
    const project = await createProject(api);
    const { body: created } = await create(project.id, { title: 'v1.0' });
    const res = await api.get(`${base(project.id)}/${created.id}`);
    expect(res).toMatchObject({ status: 200, body: created });
  });

  it("answers 404 for an unknown id or another project's milestone, 400 for a non-integer", async () => {
    const project = await createProject(api);
    const other = await createProject(api);
    const { body: m } = await create(other.id, { title: 'theirs' });
    for (const id of [m.id, 99999999, 2147483648]) expect(await api.get(`${base(project.id)}/${id}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get(`${base(project.id)}/abc`)).toMatchObject({ status: 400, body: { error: 'milestone_id is invalid' } });
  });
});

describe('GET /projects/:id/milestones/:milestone_id/issues and …/merge_requests', () => {
  it("lists the milestone's issues and merge requests of every state, highest label priority first, as IssueBasic and MergeRequestBasic", async () => {
    const project = await createProject(api, { initialize_with_readme: true });
    const { body: m } = await create(project.id, { title: 'v2.0' });
    const { body: other } = await create(project.id, { title: 'v3.0' });
    for (const [name, priority] of [['urgent', 1], ['later', 5], ['plain', null]] as const) {
      expect((await api.post(`/projects/${project.id}/labels`, { name, color: '#FF0000', ...(priority === null ? {} : { priority }) })).status).toBe(201);
    }
    const issue = async (title: string, body: Record<string, unknown>) => {
      const res = await api.post(`/projects/${project.id}/issues`, { title, ...body });
      expect(res.status).toBe(201);
      return res.body;
    };
    const later = await issue('Later', { milestone_id: m.id, labels: 'later' });
    const none = await issue('No priority', { milestone_id: m.id, labels: 'plain' });
    const urgent = await issue('Urgent', { milestone_id: m.id, labels: 'urgent,later' });
    const closed = await issue('Closed', { milestone_id: m.id });
    expect((await api.put(`/projects/${project.id}/issues/${closed.iid}`, { state_event: 'close' })).status).toBe(200);
    await issue('Elsewhere', { milestone_id: other.id, labels: 'urgent' });
    await issue('No milestone', { labels: 'urgent' });

    const issues = await api.get(`${base(project.id)}/${m.id}/issues`);
    expect(issues.status).toBe(200);
    // Ties (no priority) newest first.
    expect(issues.body.map((i: any) => i.title)).toEqual(['Urgent', 'Later', 'Closed', 'No priority']);
    expect(issues.headers.get('x-total')).toBe('4');
    expect(issues.body[0]).toMatchObject({ id: urgent.id, iid: urgent.iid, state: 'opened', milestone: { id: m.id, title: 'v2.0' }, labels: ['later', 'urgent'] });
    // IssueBasic: none of Entities::Issue's own fields.
    for (const key of ['_links', 'references', 'subscribed', 'has_tasks', 'moved_to_id']) expect(issues.body[0]).not.toHaveProperty(key);
    expect(new Set(issues.body.map((i: any) => i.id))).toEqual(new Set([urgent.id, later.id, closed.id, none.id]));
    const paged = await api.get(`${base(project.id)}/${m.id}/issues`, { query: { per_page: 2, page: 2 } });
    expect(paged.body.map((i: any) => i.title)).toEqual(['Closed', 'No priority']);

    const mr = async (branch: string, title: string, body: Record<string, unknown>) => {
      expect((await api.post(`/projects/${project.id}/repository/branches`, { branch, ref: 'master' })).status).toBe(201);
      const res = await api.post(`/projects/${project.id}/merge_requests`, { source_branch: branch, target_branch: 'master', title, ...body });
      expect(res.status).toBe(201);
      return res.body;
    };
    await mr('b-later', 'MR later', { milestone_id: m.id, labels: 'later' });
    await mr('b-urgent', 'MR urgent', { milestone_id: m.id, labels: 'urgent' });
    const gone = await mr('b-closed', 'MR closed', { milestone_id: m.id });
    expect((await api.put(`/projects/${project.id}/merge_requests/${gone.iid}`, { state_event: 'close' })).status).toBe(200);
    await mr('b-other', 'MR elsewhere', { milestone_id: other.id, labels: 'urgent' });
    const mrs = await api.get(`${base(project.id)}/${m.id}/merge_requests`);
    expect(mrs.status).toBe(200);
    expect(mrs.body.map((r: any) => [r.title, r.state])).toEqual([['MR urgent', 'opened'], ['MR later', 'opened'], ['MR closed', 'closed']]);
    expect(mrs.body[0]).toMatchObject({ milestone: { id: m.id }, labels: ['urgent'], source_branch: 'b-urgent' });
    expect(mrs.body[0]).not.toHaveProperty('changes_count');
  });

  it('leaves out what the caller may not see: confidential issues, merge requests closed to them', async () => {
    const project = await createProject(api, { visibility: 'public' });
    const { body: m } = await create(project.id, { title: 'v1' });
    for (const [title, confidential] of [['Open', false], ['Secret', true]] as const) {
      expect((await api.post(`/projects/${project.id}/issues`, { title, confidential, milestone_id: m.id })).status).toBe(201);
    }
    const stranger = await api.createUser();
    expect((await api.get(`${base(project.id)}/${m.id}/issues`)).body.map((i: any) => i.title)).toEqual(['Secret', 'Open']);
    expect((await api.get(`${base(project.id)}/${m.id}/issues`, { token: stranger.token })).body.map((i: any) => i.title)).toEqual(['Open']);
    expect((await api.put(`/projects/${project.id}`, { merge_requests_access_level: 'private' })).status).toBe(200);
    const listed = await api.get(`${base(project.id)}/${m.id}/merge_requests`, { token: stranger.token });
    expect(listed).toMatchObject({ status: 200, body: [] });
  });

  it("answers 404 for another project's milestone and 400 for a non-integer id", async () => {
    const project = await createProject(api);
    const other = await createProject(api);
    const { body: m } = await create(other.id, { title: 'theirs' });
    for (const list of ['issues', 'merge_requests']) {
      expect(await api.get(`${base(project.id)}/${m.id}/${list}`)).toMatchObject({ status: 404, body: { message: '404 Not found' } });
      expect(await api.get(`${base(project.id)}/x/${list}`)).toMatchObject({ status: 400, body: { error: 'milestone_id is invalid' } });
    }
  });
});

describe('PUT /projects/:id/milestones/:milestone_id', () => {
  it('changes the fields given, closes and activates, recording only what changed', async () => {
    const project = await createProject(api);
    const { body: m } = await create(project.id, { title: 'v1.0', due_date: '2020-02-01' });
    const url = `${base(project.id)}/${m.id}`;
    const res = await api.put(url, { title: 'v1.1', description: 'Patch', start_date: '2020-01-15' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: m.id, iid: 1, title: 'v1.1', description: 'Patch', start_date: '2020-01-15', due_date: '2020-02-01', state: 'active' });
    const closed = await api.put(url, { state_event: 'close' });
    expect(closed.body.state).toBe('closed');
    expect((await api.put(url, { state_event: 'close' })).body.state).toBe('closed');
    expect((await api.put(url, { state_event: 'activate', due_date: '' })).body).toMatchObject({ state: 'active', due_date: null });
    expect(await eventTypes(m.id)).toEqual(['MilestoneCreated', 'MilestoneUpdated', 'MilestoneClosed', 'MilestoneUpdated', 'MilestoneReopened']);
    // The old title is free again.
    expect((await create(project.id, { title: 'v1.0' })).status).toBe(201);
  });

  it('answers at_least_one_of, bad values and validation errors in GitLab\'s words, and writes nothing then', async () => {
    const project = await createProject(api);
    const { body: m } = await create(project.id, { title: 'v1.0', start_date: '2020-01-01' });
    await create(project.id, { title: 'taken' });
    const url = `${base(project.id)}/${m.id}`;
    expect(await api.put(url, {})).toMatchObject({ status: 400, body: { error: 'title, description, start_date, due_date, state_event are missing, at least one parameter must be provided' } });
    expect(await api.put(url, { state_event: 'reopen' })).toMatchObject({ status: 400, body: { error: 'state_event does not have a valid value' } });
    expect(await api.put(url, { title: 'taken' })).toMatchObject({
      status: 400,
      body: { message: 'Failed to update milestone {:title=>["already being used for another group or project milestone."]}' },
    });
    expect(await api.put(url, { due_date: '2019-01-01', state_event: 'close' })).toMatchObject({ status: 400, body: { message: 'Failed to update milestone {:due_date=>["must be greater than start date"]}' } });
    expect(await eventTypes(m.id)).toEqual(['MilestoneCreated']);
    expect(await api.put(`${base(project.id)}/99999999`, { title: 'x' })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
});

describe('DELETE /projects/:id/milestones/:milestone_id', () => {
  it('deletes the milestone (204) and frees its title', async () => {
    const project = await createProject(api);
    const { body: m } = await create(project.id, { title: 'v1.0' });
    expect((await api.del(`${base(project.id)}/${m.id}`)).status).toBe(204);
    expect((await api.get(`${base(project.id)}/${m.id}`)).status).toBe(404);
    expect((await api.del(`${base(project.id)}/${m.id}`)).status).toBe(404);
    expect(await eventTypes(m.id)).toEqual(['MilestoneCreated', 'MilestoneDeleted']);
    expect((await create(project.id, { title: 'v1.0' })).status).toBe(201);
  });

  it("goes with its project's deletion", async () => {
    const project = await createProject(api);
    expect((await create(project.id, { title: 'v1.0' })).status).toBe(201);
    expect((await api.del(`/projects/${project.id}`)).status).toBe(202);
    await eventually(async () => ((await rowCount(project.id)) === 0 ? true : undefined));
  });
});

describe('activity', () => {
  it('records created, closed, reopened and destroyed with the milestone as target', async () => {
    const project = await createProject(api);
    const { body: m } = await create(project.id, { title: 'v1.0' });
    const url = `${base(project.id)}/${m.id}`;
    await api.put(url, { state_event: 'close' });
    await api.put(url, { state_event: 'activate' });
    await api.put(url, { description: 'no event' });
    await api.del(url);
    const res = await api.get(`/projects/${project.id}/events`, { query: { target_type: 'milestone' } });
    expect(res.status).toBe(200);
    expect(res.body.map((e: any) => [e.action_name, e.target_type, e.target_id, e.target_iid, e.target_title])).toEqual([
      ['destroyed', 'Milestone', m.id, 1, 'v1.0'],
      ['opened', 'Milestone', m.id, 1, 'v1.0'],
      ['closed', 'Milestone', m.id, 1, 'v1.0'],
      ['opened', 'Milestone', m.id, 1, 'v1.0'],
    ]);
  });
});

describe('an archived project', () => {
  it('shows its milestones and refuses writes (403)', async () => {
    const project = await createProject(api);
    const { body: m } = await create(project.id, { title: 'v1.0' });
    expect((await api.post(`/projects/${project.id}/archive`)).status).toBe(201);
    expect((await api.get(base(project.id))).status).toBe(200);
    expect((await create(project.id, { title: 'v2.0' })).status).toBe(403);
    expect((await api.put(`${base(project.id)}/${m.id}`, { title: 'x' })).status).toBe(403);
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'internal' | 'public';

// GitLab 12: members (and anyone signed in on an open project) read; developers write; a private project of others is 404, never 403.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/milestones':                 { private: { anonymous: 401, nonMember: 404, external: 404, guest: 200, reporter: 200, developer: 200, admin: 200, blocked: 403 }, internal: { nonMember: 200, external: 404 }, public: { anonymous: 401, nonMember: 200, external: 200 } },
  'GET /projects/:id/milestones/:milestone_id':   { private: { anonymous: 401, nonMember: 404, guest: 200, reporter: 200, admin: 200 }, internal: { nonMember: 200, external: 404 }, public: { nonMember: 200, external: 200 } },
  'GET /projects/:id/milestones/:milestone_id/issues':         { private: { anonymous: 401, nonMember: 404, external: 404, guest: 200, reporter: 200, admin: 200, blocked: 403 }, internal: { nonMember: 200, external: 404 }, public: { anonymous: 401, nonMember: 200, external: 200 } },
  'GET /projects/:id/milestones/:milestone_id/merge_requests': { private: { anonymous: 401, nonMember: 404, external: 404, guest: 200, reporter: 200, admin: 200, blocked: 403 }, internal: { nonMember: 200, external: 404 }, public: { anonymous: 401, nonMember: 200, external: 200 } },
  'POST /projects/:id/milestones':                { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 201, maintainer: 201, owner: 201, admin: 201, blocked: 403 }, public: { anonymous: 401, nonMember: 403, external: 403, reporter: 403, developer: 201 } },
  'PUT /projects/:id/milestones/:milestone_id':   { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 200, maintainer: 200, admin: 200 }, public: { nonMember: 403, reporter: 403, developer: 200 } },
  'DELETE /projects/:id/milestones/:milestone_id': { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 204, maintainer: 204, owner: 204, admin: 204 }, public: { nonMember: 403, reporter: 403, developer: 204 } },
};

describe('permissions', () => {
  let callers: Callers;
  const projects = new Map<Visibility, number>();
  let counter = 0;
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'internal', 'public'] as const) projects.set(visibility, await sourceWithRoles(api, callers, 'projects', visibility));
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const projectId = projects.get(visibility)!;
    // Every call gets a milestone of its own, made by root.
    const m = (await create(projectId, { title: `m-${++counter}` })).body;
    const url = path.replace(':id', String(projectId)).replace(':milestone_id', String(m.id));
    const token = callers[caller].token;
    const body = method === 'POST' ? { title: `made-${counter}` } : method === 'PUT' ? { description: 'changed' } : undefined;
    return (await api.request(method, url, { token, ...(body ? { body } : {}) })).status;
  });
});
