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

const FIELDS = ['id', 'name', 'color', 'description', 'description_html', 'text_color', 'subscribed', 'priority', 'is_project_label'];
const base = (projectId: number) => `/projects/${projectId}/labels`;
const create = (projectId: number, body: Record<string, unknown>, token?: string | null) => api.post(base(projectId), body, token === undefined ? {} : { token });
const eventTypes = async (id: number) => (await api.events(`label-${id}`)).map((e) => e.type);
const rowCount = async (projectId: number) => Number((await sql<{ n: string }>`select count(*) as n from labels where project_id = ${projectId}`.execute(api.handle.db)).rows[0]!.n);
const names = (res: { body: any[] }) => res.body.map((l) => l.name);

describe('POST /projects/:id/labels', () => {
  it('creates a project label, a CSS colour name becoming its hex code, and appends LabelCreated', async () => {
    const project = await createProject(api);
    const res = await create(project.id, { name: ' bug ', color: 'Red', description: 'Something <broken>', priority: 2 });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(FIELDS);
    expect(res.body).toEqual({
      id: expect.any(Number), name: 'bug', color: '#FF0000', description: 'Something <broken>', description_html: 'Something &lt;broken&gt;',
      text_color: '#FFFFFF', subscribed: false, priority: 2, is_project_label: true,
    });
    expect(await api.events(`label-${res.body.id}`)).toMatchObject([{ type: 'LabelCreated', data: { id: res.body.id, project_id: project.id, title: 'bug', color: '#FF0000', priority: 2 } }]);
    // LabelsHelper.text_color_for_bg: dark text on a light colour; three-digit codes are kept.
    expect((await create(project.id, { name: 'docs', color: '#ffe' })).body).toMatchObject({ color: '#ffe', text_color: '#333333', description: null, description_html: '', priority: null });
    expect((await create(project.id, { name: 'ui', color: '#428BCA', priority: '' })).body).toMatchObject({ text_color: '#FFFFFF', priority: null });
  });

  it("answers Grape's parameter errors before looking at the project", async () => {
    const project = await createProject(api);
    expect(await create(project.id, {})).toMatchObject({ status: 400, body: { error: 'name is missing, color is missing' } });
    expect(await create(project.id, { name: 'x', color: '#fff', priority: 'high' })).toMatchObject({ status: 400, body: { error: 'priority is invalid' } });
    expect(await create(999999, { name: 'x', color: '#fff' })).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    expect(await rowCount(project.id)).toBe(0);
  });

  it("answers 409 for a name already there, and the model's errors otherwise, writing nothing then", async () => {
    const project = await createProject(api);
    expect((await create(project.id, { name: 'bug', color: '#ff0000' })).status).toBe(201);
    expect(await create(project.id, { name: 'bug', color: '#00ff00' })).toMatchObject({ status: 409, body: { message: 'Label already exists' } });
    // Stripped, the title is taken: the model's uniqueness validation.
    expect(await create(project.id, { name: 'bug ', color: '#00ff00' })).toMatchObject({ status: 400, body: { message: { title: ['has already been taken'] } } });
    expect(await create(project.id, { name: 'a,b', color: 'nocolor' })).toMatchObject({ status: 400, body: { message: { color: ['must be a valid color code'], title: ['is invalid'] } } });
    expect(await create(project.id, { name: '', color: '' })).toMatchObject({ status: 400, body: { message: { color: ['must be a valid color code'], title: ["can't be blank", 'is invalid'] } } });
    expect(await create(project.id, { name: 'x', color: '#12345' })).toMatchObject({ status: 400, body: { message: { color: ['must be a valid color code'] } } });
    expect(await create(project.id, { name: 'x', color: '#fff', priority: -1 })).toMatchObject({ status: 400, body: { message: { priority: ['must be greater than or equal to 0'] } } });
    expect(await rowCount(project.id)).toBe(1);
    // Titles are case-sensitive and unique within a project only.
    expect((await create(project.id, { name: 'Bug', color: '#fff' })).status).toBe(201);
    expect((await create((await createProject(api)).id, { name: 'bug', color: '#fff' })).status).toBe(201);
  });
});

describe('GET /projects/:id/labels', () => {
  it('lists by title, paginated, with zero counts on request', async () => {
    const project = await createProject(api);
    for (const name of ['feature', 'bug', 'docs']) expect((await create(project.id, { name, color: '#fff' })).status).toBe(201);
    const res = await api.get(base(project.id), { query: { per_page: 2 } });
    expect(res.status).toBe(200);
    expect(names(res)).toEqual(['bug', 'docs']);
    expect(res.headers.get('x-total')).toBe('3');
    expect(Object.keys(res.body[0])).toEqual(FIELDS);
    const counted = await api.get(base(project.id), { query: { with_counts: true } });
    expect(Object.keys(counted.body[0])).toEqual([...FIELDS.slice(0, 6), 'open_issues_count', 'closed_issues_count', 'open_merge_requests_count', ...FIELDS.slice(6)]);
    expect(counted.body[0]).toMatchObject({ open_issues_count: 0, closed_issues_count: 0, open_merge_requests_count: 0 });
    expect(await api.get(base(project.id), { query: { with_counts: 'maybe' } })).toMatchObject({ status: 400, body: { error: 'with_counts is invalid' } });
  });
});

describe('GET /projects/:id/labels/:name', () => {
  it('finds a label by id or by title, "404 Label Not Found" otherwise', async () => {
    const project = await createProject(api);
    const { body: label } = await create(project.id, { name: 'needs review/ui', color: '#fff' });
    expect(await api.get(`${base(project.id)}/${label.id}`)).toMatchObject({ status: 200, body: label });
    expect(await api.get(`${base(project.id)}/${encodeURIComponent('needs review/ui')}`)).toMatchObject({ status: 200, body: label });
    const other = await createProject(api);
    const { body: theirs } = await create(other.id, { name: 'theirs', color: '#fff' });
    for (const name of ['nope', String(theirs.id), 'theirs']) expect(await api.get(`${base(project.id)}/${name}`)).toMatchObject({ status: 404, body: { message: '404 Label Not Found' } });
  });
});

describe('PUT /projects/:id/labels and /labels/:name', () => {
  it('renames, recolours, describes and (de)prioritizes, recording only what changed', async () => {
    const project = await createProject(api);
    const { body: label } = await create(project.id, { name: 'bug', color: '#fff', priority: 1 });
    const res = await api.put(base(project.id), { name: 'bug', new_name: 'defect', color: 'black', description: 'Broken' });
    expect(res).toMatchObject({ status: 200, body: { id: label.id, name: 'defect', color: '#000000', text_color: '#FFFFFF', description: 'Broken', priority: 1 } });
    expect((await api.put(base(project.id), { label_id: label.id, priority: null })).body.priority).toBeNull();
    expect((await api.put(`${base(project.id)}/defect`, { priority: 3 })).body.priority).toBe(3);
    expect((await api.put(`${base(project.id)}/${label.id}`, { color: '#000000' })).status).toBe(200);
    expect(await eventTypes(label.id)).toEqual(['LabelCreated', 'LabelUpdated', 'LabelUpdated', 'LabelUpdated']);
    // The old title is free again.
    expect((await create(project.id, { name: 'bug', color: '#fff' })).status).toBe(201);
  });

  it("answers Grape's and the model's errors, and writes nothing then", async () => {
    const project = await createProject(api);
    const { body: label } = await create(project.id, { name: 'bug', color: '#fff' });
    await create(project.id, { name: 'taken', color: '#fff' });
    expect(await api.put(base(project.id), { name: 'bug' })).toMatchObject({ status: 400, body: { error: 'new_name, color, description, priority are missing, at least one parameter must be provided' } });
    expect(await api.put(base(project.id), { color: '#000' })).toMatchObject({ status: 400, body: { error: 'label_id, name are missing, exactly one parameter must be provided' } });
    expect(await api.put(base(project.id), { name: 'bug', label_id: label.id, color: '#000' })).toMatchObject({ status: 400, body: { error: 'label_id, name are mutually exclusive' } });
    expect(await api.put(`${base(project.id)}/bug`, {})).toMatchObject({ status: 400, body: { error: 'new_name, color, description, priority are missing, at least one parameter must be provided' } });
    expect(await api.put(`${base(project.id)}/bug`, { new_name: 'taken' })).toMatchObject({ status: 400, body: { message: { title: ['has already been taken'] } } });
    expect(await api.put(`${base(project.id)}/bug`, { color: 'nocolor' })).toMatchObject({ status: 400, body: { message: { color: ['must be a valid color code'] } } });
    expect(await api.put(`${base(project.id)}/nope`, { color: '#000' })).toMatchObject({ status: 404, body: { message: '404 Label Not Found' } });
    expect(await eventTypes(label.id)).toEqual(['LabelCreated']);
  });
});

describe('DELETE /projects/:id/labels and /labels/:name', () => {
  it('deletes by name or label_id as parameters, or by name or id in the path (204)', async () => {
    const project = await createProject(api);
    const made = [];
    for (const name of ['a', 'b', 'c', 'd']) made.push((await create(project.id, { name, color: '#fff' })).body);
    expect((await api.del(base(project.id), { query: { name: 'a' } })).status).toBe(204);
    expect((await api.del(base(project.id), { query: { label_id: made[1].id } })).status).toBe(204);
    expect((await api.del(`${base(project.id)}/c`)).status).toBe(204);
    expect((await api.del(`${base(project.id)}/${made[3].id}`)).status).toBe(204);
    expect(await rowCount(project.id)).toBe(0);
    expect(await eventTypes(made[0].id)).toEqual(['LabelCreated', 'LabelDeleted']);
    expect(await api.del(`${base(project.id)}/c`)).toMatchObject({ status: 404, body: { message: '404 Label Not Found' } });
    expect(await api.del(base(project.id))).toMatchObject({ status: 400, body: { error: 'label_id, name are missing, exactly one parameter must be provided' } });
    // The title is free again.
    expect((await create(project.id, { name: 'a', color: '#fff' })).status).toBe(201);
  });

  it("goes with its project's deletion", async () => {
    const project = await createProject(api);
    expect((await create(project.id, { name: 'bug', color: '#fff' })).status).toBe(201);
    expect((await api.del(`/projects/${project.id}`)).status).toBe(202);
    await eventually(async () => ((await rowCount(project.id)) === 0 ? true : undefined));
  });
});

describe('an archived project', () => {
  it('shows its labels and refuses writes (403)', async () => {
    const project = await createProject(api);
    expect((await create(project.id, { name: 'bug', color: '#fff' })).status).toBe(201);
    expect((await api.post(`/projects/${project.id}/archive`)).status).toBe(201);
    expect((await api.get(base(project.id))).status).toBe(200);
    expect((await create(project.id, { name: 'x', color: '#fff' })).status).toBe(403);
    expect((await api.put(`${base(project.id)}/bug`, { color: '#000' })).status).toBe(403);
  });
});

// ───────────────────────────── Permissions ─────────────────────────────

type Visibility = 'private' | 'internal' | 'public';

// GitLab 12: members (and anyone signed in on an open project) read; reporters write; a private project of others is 404, never 403.
// prettier-ignore
const MATRIX: MatrixTable<Role, Visibility> = {
  'GET /projects/:id/labels':          { private: { anonymous: 401, nonMember: 404, external: 404, guest: 200, reporter: 200, admin: 200, blocked: 403 }, internal: { nonMember: 200, external: 404 }, public: { anonymous: 401, nonMember: 200, external: 200 } },
  'GET /projects/:id/labels/:name':    { private: { anonymous: 401, nonMember: 404, guest: 200, admin: 200 }, internal: { nonMember: 200, external: 404 }, public: { nonMember: 200 } },
  'POST /projects/:id/labels':         { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201, blocked: 403 }, public: { anonymous: 401, nonMember: 403, external: 403, guest: 403, reporter: 201 } },
  'PUT /projects/:id/labels':          { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 200, maintainer: 200, admin: 200 }, public: { nonMember: 403, guest: 403, reporter: 200 } },
  'PUT /projects/:id/labels/:name':    { private: { nonMember: 404, guest: 403, reporter: 200 }, public: { nonMember: 403, reporter: 200 } },
  'DELETE /projects/:id/labels':       { private: { anonymous: 401, nonMember: 404, guest: 403, reporter: 204, admin: 204 }, public: { nonMember: 403, guest: 403, reporter: 204 } },
  'DELETE /projects/:id/labels/:name': { private: { nonMember: 404, guest: 403, reporter: 204, owner: 204 }, public: { nonMember: 403, reporter: 204 } },
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
    // Every call gets a label of its own, made by root.
    const label = (await create(projectId, { name: `l-${++counter}`, color: '#fff' })).body;
    const url = path.replace(':id', String(projectId)).replace(':name', label.name);
    const token = callers[caller].token;
    const selector: Record<string, string> = path.endsWith('/labels') ? { name: label.name as string } : {};
    const body = method === 'POST' ? { name: `made-${counter}`, color: 'blue' } : method === 'PUT' ? { ...selector, color: '#000' } : undefined;
    const query = method === 'DELETE' ? selector : undefined;
    return (await api.request(method, url, { token, ...(body ? { body } : {}), ...(query ? { query } : {}) })).status;
  });
});
