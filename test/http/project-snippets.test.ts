import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { createGroup, createProject, settled } from '../support/fixtures.js';
import { permissionMatrix } from '../support/matrix.js';
import { createCallers, grantRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  callers = await createCallers(api);
});
afterAll(() => api.close());

const AGENT = { 'User-Agent': 'project-snippets-spec/1.0' };
const VISIBILITIES: readonly Visibility[] = ['private', 'internal', 'public'];
const token = (role: Role) => callers[role].token;
const body = (extra: Record<string, unknown> = {}) => ({ title: 'Hello', file_name: 'hello.rb', content: 'puts 1', visibility: 'private', ...extra });
const base = (projectId: number) => `/projects/${projectId}/snippets`;
const create = (projectId: number, extra: Record<string, unknown> = {}, role: Role = 'maintainer') => api.post(base(projectId), body(extra), { token: token(role), headers: AGENT });
const rowCount = async (projectId: number) =>
  Number((await sql<{ n: string }>`select count(*) as n from snippets where project_id = ${projectId}`.execute(api.handle.db)).rows[0]!.n);

/** A project of the owner's group, with the member roles on it and its snippets feature at `level`. */
async function projectWithRoles(visibility: Visibility, level: 'enabled' | 'private' | 'disabled' = 'enabled') {
  const group = await createGroup(api, { token: token('owner')!, visibility });
  const project = await createProject(api, { token: token('owner')!, group, visibility });
  await grantRoles(api, callers, { projects: project.id });
  if (level !== 'enabled') expect((await api.put(`/projects/${project.id}`, { snippets_access_level: level })).status).toBe(200);
  return project.id;
}

/**
 * A public and a private project with the roles, made once for the describes that share them:
 * none of their cells looks at the snippets another makes there (the listing test has its own).
 */
const shared: Partial<Record<'public' | 'private', Promise<number>>> = {};
const sharedProject = (visibility: 'public' | 'private') => (shared[visibility] ??= projectWithRoles(visibility));

describe('POST /projects/:id/snippets', () => {
  let projectId: number;
  beforeAll(async () => {
    projectId = await sharedProject('public');
  });

  it('creates a project snippet, as Entities::ProjectSnippet', async () => {
    const res = await create(projectId, { description: 'd', visibility: 'internal' });
    expect(res.status).toBe(201);
    const project = (await api.get(`/projects/${projectId}`)).body;
    expect(res.body).toEqual({
      id: expect.any(Number),
      title: 'Hello',
      file_name: 'hello.rb',
      description: 'd',
      visibility: 'internal',
      author: expect.objectContaining({ id: callers.maintainer.user!.id, username: callers.maintainer.user!.username }),
      updated_at: expect.any(String),
      created_at: expect.any(String),
      project_id: projectId,
      web_url: `${api.url}/${project.path_with_namespace}/snippets/${res.body.id}`,
    });
    expect(await api.events(`snippet-${res.body.id}`)).toMatchObject([{ type: 'SnippetCreated', data: { project_id: projectId, visibility: 'internal', content: 'puts 1' } }]);
  });

  it('takes the content as `code` too (its 12.x name), not both', async () => {
    const { content: _, ...withoutContent } = body();
    const res = await api.post(base(projectId), { ...withoutContent, code: 'puts :code' }, { token: token('maintainer') });
    expect(res.status).toBe(201);
    expect((await api.get(`${base(projectId)}/${res.body.id}/raw`, { token: token('maintainer') })).text).toBe('puts :code');
    expect(await create(projectId, { code: 'x' })).toMatchObject({ status: 400, body: { error: 'code, content are mutually exclusive' } });
  });

  it("answers Grape's errors, then the model's", async () => {
    const before = await rowCount(projectId);
    expect(await api.post(base(projectId), {}, { token: token('maintainer') })).toMatchObject({ status: 400, body: { error: 'title is missing, file_name is missing, visibility is missing' } });
    expect(await create(projectId, { visibility: 'secret', title: '' })).toMatchObject({ status: 400, body: { error: 'title is empty, visibility does not have a valid value' } });
    const { content: _, ...withoutContent } = body();
    expect(await api.post(base(projectId), withoutContent, { token: token('maintainer') })).toMatchObject({ status: 400, body: { message: { error: "Content can't be blank" } } });
    expect(await rowCount(projectId)).toBe(before);
  });

  permissionMatrix(
    {
      'POST /projects/:id/snippets': {
        private: { anonymous: 401, external: 404, nonMember: 404, guest: 403, reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201 },
        public: { anonymous: 401, external: 403, nonMember: 403, guest: 403, reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201 },
      },
    },
    async ({ caller, visibility }) => {
      const id = visibility === 'public' ? projectId : await sharedProject('private');
      return (await create(id, {}, caller)).status;
    },
  );

  it('is refused (403) while the snippets feature is disabled, to administrators too, and on an archived project', async () => {
    const disabled = await projectWithRoles('public', 'disabled');
    expect((await create(disabled, {}, 'maintainer')).status).toBe(403);
    expect((await create(disabled, {}, 'admin')).status).toBe(403);
    const archived = await projectWithRoles('public');
    expect((await api.post(`/projects/${archived}/archive`, {}, { token: token('owner') })).status).toBe(201);
    expect((await create(archived, {}, 'maintainer')).status).toBe(403);
  });
});

describe('GET /projects/:id/snippets/:snippet_id, the list and /raw', () => {
  /** project visibility → feature level → snippet visibility → id */
  const ids = new Map<string, number>();
  const projects = new Map<string, number>();
  const key = (project: Visibility, level: string, snippet?: Visibility) => [project, level, snippet].filter(Boolean).join('/');
  beforeAll(async () => {
    for (const project of VISIBILITIES) {
      for (const level of ['enabled', 'private', 'disabled'] as const) {
        if (level !== 'enabled' && project !== 'public') continue;
        // The listing test reads public/enabled's snippets: that one is its own.
        const id = project === 'private' ? await sharedProject('private') : await projectWithRoles(project, 'enabled');
        projects.set(key(project, level), id);
        for (const snippet of VISIBILITIES) ids.set(key(project, level, snippet), (await create(id, { visibility: snippet, content: `${snippet} content` }, 'reporter')).body.id);
        if (level !== 'enabled') expect((await api.put(`/projects/${id}`, { snippets_access_level: level })).status).toBe(200);
      }
    }
  });

  const all = (status: number) => ({ private: status, internal: status, public: status });
  // GitLab 12.10: members see every snippet of the project, others by the snippet's level; the
  // project must be visible and its snippets feature available to the caller.
  const MEMBERS = { guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 } as const;
  const table = {
    'private/enabled': { anonymous: all(401), external: all(404), nonMember: all(404), ...Object.fromEntries(Object.entries(MEMBERS).map(([r, s]) => [r, all(s)])) },
    'internal/enabled': {
      anonymous: all(401),
      external: all(404),
      nonMember: { private: 404, internal: 200, public: 200 },
      ...Object.fromEntries(Object.entries(MEMBERS).map(([r, s]) => [r, all(s)])),
    },
    'public/enabled': {
      anonymous: all(401),
      external: { private: 404, internal: 404, public: 200 },
      nonMember: { private: 404, internal: 200, public: 200 },
      ...Object.fromEntries(Object.entries(MEMBERS).map(([r, s]) => [r, all(s)])),
    },
    'public/private': { anonymous: all(401), external: all(404), nonMember: all(404), ...Object.fromEntries(Object.entries(MEMBERS).map(([r, s]) => [r, all(s)])) },
    'public/disabled': { anonymous: all(401), external: all(404), nonMember: all(404), ...Object.fromEntries(Object.keys(MEMBERS).map((r) => [r, all(404)])) },
  } as Record<string, Record<string, Record<Visibility, number>>>;

  // Rows: 'GET …' × '<project>/<feature level>/<snippet>' × caller.
  const matrix: Record<string, Record<string, Record<string, number>>> = { 'GET /projects/:id/snippets/:snippet_id': {}, 'GET /projects/:id/snippets/:snippet_id/raw': {} };
  for (const [projectKey, byCaller] of Object.entries(table)) {
    for (const snippet of VISIBILITIES) {
      for (const endpoint of Object.keys(matrix)) {
        matrix[endpoint]![`${projectKey}/${snippet}`] = Object.fromEntries(Object.entries(byCaller).map(([caller, statuses]) => [caller, statuses[snippet]]));
      }
    }
  }

  permissionMatrix(matrix, async ({ endpoint, caller, visibility }) => {
    const [project, level, snippet] = visibility.split('/') as [Visibility, string, Visibility];
    const path = endpoint
      .replace('GET ', '')
      .replace(':id', String(projects.get(key(project, level))))
      .replace(':snippet_id', String(ids.get(key(project, level, snippet))));
    const res = await api.get(path, { token: token(caller as Role) });
    if (res.status === 200) {
      if (endpoint.endsWith('/raw')) expect(res.text).toBe(`${snippet} content`);
      else expect(res.body).toMatchObject({ id: ids.get(key(project, level, snippet)), visibility: snippet });
    }
    // A hidden project is "404 Project Not Found"; a hidden snippet ActiveRecord's "404 Not found" (raw: "404 Snippet Not Found").
    if (res.status === 404 && project === 'private' && ['external', 'nonMember'].includes(caller)) expect(res.body).toEqual({ message: '404 Project Not Found' });
    if (res.status === 404 && project === 'public') expect(res.body).toEqual({ message: endpoint.endsWith('/raw') ? '404 Snippet Not Found' : '404 Not found' });
    return res.status;
  });

  it('lists the snippets the caller may see, newest first; none while the feature is not theirs', async () => {
    const id = projects.get('public/enabled')!;
    const ofProject = (s: Visibility) => ids.get(key('public', 'enabled', s));
    const list = async (role: Role) => (await api.get(base(id), { token: token(role) })).body.map((s: any) => s.id);
    expect(await list('guest')).toEqual([ofProject('public'), ofProject('internal'), ofProject('private')]);
    expect(await list('nonMember')).toEqual([ofProject('public'), ofProject('internal')]);
    expect(await list('external')).toEqual([ofProject('public')]);
    expect(await list('admin')).toEqual([ofProject('public'), ofProject('internal'), ofProject('private')]);
    const res = await api.get(base(id), { token: token('guest'), query: { per_page: 1 } });
    expect(res.headers.get('x-total')).toBe('3');
    expect(Object.keys(res.body[0])).toEqual(['id', 'title', 'file_name', 'description', 'visibility', 'author', 'updated_at', 'created_at', 'project_id', 'web_url']);
    expect((await api.get(base(projects.get('public/private')!), { token: token('nonMember') })).body).toEqual([]);
    expect((await api.get(base(projects.get('public/disabled')!), { token: token('admin') })).body).toEqual([]);
    expect((await api.get(base(projects.get('private/enabled')!), { token: token('nonMember') })).status).toBe(404);
    expect((await api.get(base(id), { token: null })).status).toBe(401);
  });

  it('serves the raw content as text/plain', async () => {
    const res = await api.get(`${base(projects.get('public/enabled')!)}/${ids.get('public/enabled/public')}/raw`, { token: token('nonMember') });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(res.text).toBe('public content');
  });

  it('answers a snippet of another project 404', async () => {
    const other = projects.get('internal/enabled')!;
    expect(await api.get(`${base(other)}/${ids.get('public/enabled/public')}`, { token: token('admin') })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get(`${base(other)}/abc`, { token: token('admin') })).toMatchObject({ status: 400, body: { error: 'snippet_id is invalid' } });
  });
});

describe('PUT and DELETE /projects/:id/snippets/:snippet_id', () => {
  let projectId: number;
  /** Per visibility, the reporter's snippet the cells that change nothing (no 2xx) share. */
  const untouched = new Map<Visibility, Promise<{ id: number }>>();
  beforeAll(async () => {
    projectId = await sharedProject('public');
  });

  // The author is the reporter. Maintainers may change anybody's but an internal snippet;
  // administrators and the author any; a snippet the caller cannot see is 404.
  permissionMatrix(
    {
      'PUT /projects/:id/snippets/:snippet_id': {
        private: { anonymous: 401, external: 404, nonMember: 404, guest: 403, reporter: 200, developer: 403, maintainer: 200, owner: 200, admin: 200 },
        internal: { anonymous: 401, external: 404, nonMember: 403, guest: 403, reporter: 200, developer: 403, maintainer: 403, owner: 403, admin: 200 },
        public: { anonymous: 401, external: 403, nonMember: 403, guest: 403, reporter: 200, developer: 403, maintainer: 200, owner: 200, admin: 200 },
      },
      'DELETE /projects/:id/snippets/:snippet_id': {
        private: { anonymous: 401, external: 404, nonMember: 404, guest: 403, reporter: 204, developer: 403, maintainer: 204, owner: 204, admin: 204 },
        internal: { anonymous: 401, external: 404, nonMember: 403, guest: 403, reporter: 204, developer: 403, maintainer: 403, owner: 403, admin: 204 },
        public: { anonymous: 401, external: 403, nonMember: 403, guest: 403, reporter: 204, developer: 403, maintainer: 204, owner: 204, admin: 204 },
      },
    },
    async ({ endpoint, caller, visibility, status }) => {
      // A cell that is to change the snippet gets a fresh one; the others share one, whose log
      // shows (below) that none of them changed it.
      const fresh = async () => (await create(projectId, { visibility }, 'reporter')).body as { id: number };
      const snippet = status < 300 ? await fresh() : await (untouched.get(visibility as Visibility) ?? untouched.set(visibility as Visibility, fresh()).get(visibility as Visibility)!);
      const path = `${base(projectId)}/${snippet.id}`;
      const res = endpoint.startsWith('PUT') ? await api.put(path, { title: 'Changed' }, { token: token(caller as Role) }) : await api.del(path, { token: token(caller as Role) });
      if (res.status === 404) expect(res.body).toEqual({ message: '404 Snippet Not Found' });
      const after = await api.events(`snippet-${snippet.id}`);
      expect(after.length).toBe(res.status < 300 ? 2 : 1);
      return res.status;
    },
  );

  it('updates what is sent (code or content), and answers GitLab 12.10’s parameter rules', async () => {
    const { body: snippet } = await create(projectId, { visibility: 'private' });
    const path = `${base(projectId)}/${snippet.id}`;
    const res = await api.put(path, { code: 'puts 2', file_name: 'two.rb', description: 'new' }, { token: token('maintainer') });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ file_name: 'two.rb', description: 'new', visibility: 'private' });
    expect((await api.get(`${path}/raw`, { token: token('maintainer') })).text).toBe('puts 2');
    // GitLab 12.10 asks at_least_one_of … :visibility_level, which it does not declare.
    expect(await api.put(path, { visibility: 'public' }, { token: token('maintainer') })).toMatchObject({
      status: 400,
      body: { error: 'title, file_name, code, content, visibility_level are missing, at least one parameter must be provided' },
    });
    // Grape's at_least_one_of looks at the request's parameters: an undeclared visibility_level passes it, and changes nothing.
    const events = (await api.events(`snippet-${snippet.id}`)).length;
    expect(await api.put(path, { visibility_level: 20 }, { token: token('maintainer') })).toMatchObject({ status: 200, body: { visibility: 'private', file_name: 'two.rb' } });
    expect(await api.events(`snippet-${snippet.id}`)).toHaveLength(events);
    expect((await api.put(path, { visibility: 'public', title: 'Public now' }, { token: token('maintainer') })).body).toMatchObject({ visibility: 'public', title: 'Public now' });
    expect(await api.put(path, { code: 'a', content: 'b' }, { token: token('maintainer') })).toMatchObject({ status: 400, body: { error: 'code, content are mutually exclusive' } });
  });
});

describe('GET /projects/:id/snippets/:snippet_id/user_agent_detail', () => {
  it('answers the creating request’s user agent and IP to administrators', async () => {
    const projectId = await sharedProject('private');
    const { body: snippet } = await create(projectId);
    const path = `${base(projectId)}/${snippet.id}/user_agent_detail`;
    expect(await api.get(path, { token: token('admin') })).toMatchObject({
      status: 200,
      body: { user_agent: 'project-snippets-spec/1.0', ip_address: expect.any(String), akismet_submitted: false },
    });
    expect((await api.get(path, { token: token('maintainer') })).status).toBe(403);
    expect((await api.get(path, { token: null })).status).toBe(401);
    expect(await api.get(`${base(projectId + 1)}/${snippet.id}/user_agent_detail`, { token: token('admin') })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
    expect(await api.get(`${base(99999999999)}/${snippet.id}/user_agent_detail`, { token: token('admin') })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
});

describe('a deleted project', () => {
  it('takes its snippets along', async () => {
    const projectId = await projectWithRoles('public');
    const { body: snippet } = await create(projectId, { visibility: 'public' });
    expect((await api.del(`/projects/${projectId}`, { token: token('owner') })).status).toBe(202);
    await expect.poll(() => rowCount(projectId), { timeout: 10_000 }).toBe(0);
    expect((await api.get(`/snippets/${snippet.id}`, { token: token('admin') })).status).toBe(404);
  });
});
