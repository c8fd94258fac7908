import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { permissionMatrix } from '../support/matrix.js';
import { createCallers, withScopes, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  callers = await createCallers(api);
});
afterAll(() => api.close());

const AGENT = { 'User-Agent': 'snippets-spec/1.0' };
const token = (role: Role) => callers[role].token;
const body = (extra: Record<string, unknown> = {}) => ({ title: 'Hello', file_name: 'hello.rb', content: 'puts "hello"', ...extra });
const create = (extra: Record<string, unknown> = {}, role: Role = 'nonMember') => api.post('/snippets', body(extra), { token: token(role), headers: AGENT });
const rowCount = async () => Number((await sql<{ n: string }>`select count(*) as n from snippets`.execute(api.handle.db)).rows[0]!.n);

async function withSetting(change: Record<string, unknown>, restore: Record<string, unknown>, run: () => Promise<void>) {
  expect((await api.put('/application/settings', change)).status).toBe(200);
  try {
    await run();
  } finally {
    expect((await api.put('/application/settings', restore)).status).toBe(200);
  }
}

describe('POST /snippets', () => {
  it('creates an internal personal snippet by default, as Entities::PersonalSnippet, and appends SnippetCreated', async () => {
    const res = await create({ description: 'greets' });
    expect(res.status).toBe(201);
    const user = callers.nonMember.user!;
    expect(res.body).toEqual({
      id: expect.any(Number),
      title: 'Hello',
      file_name: 'hello.rb',
      description: 'greets',
      visibility: 'internal',
      author: { id: user.id, name: expect.any(String), username: user.username, state: 'active', avatar_url: expect.any(String), web_url: `${api.url}/${user.username}` },
      updated_at: expect.any(String),
      created_at: res.body.updated_at,
      project_id: null,
      web_url: `${api.url}/snippets/${res.body.id}`,
      raw_url: `${api.url}/snippets/${res.body.id}/raw`,
    });
    const events = await api.events(`snippet-${res.body.id}`);
    expect(events).toMatchObject([
      {
        type: 'SnippetCreated',
        data: { id: res.body.id, project_id: null, author_id: user.id, title: 'Hello', file_name: 'hello.rb', content: 'puts "hello"', description: 'greets', visibility: 'internal' },
        metadata: { actor_id: user.id, user_agent: 'snippets-spec/1.0' },
      },
    ]);
  });

  it("answers Grape's parameter errors, in declaration order", async () => {
    const before = await rowCount();
    expect(await api.post('/snippets', {}, { token: token('nonMember') })).toMatchObject({ status: 400, body: { error: 'title is missing, file_name is missing, content is missing' } });
    expect(await create({ title: '', content: '' })).toMatchObject({ status: 400, body: { error: 'title is empty, content is empty' } });
    expect(await create({ visibility: 'secret' })).toMatchObject({ status: 400, body: { error: 'visibility does not have a valid value' } });
    expect(await rowCount()).toBe(before);
  });

  it("answers the model's errors as Snippets::CreateService does", async () => {
    expect(await create({ title: 't'.repeat(256), file_name: 'f'.repeat(256) })).toMatchObject({
      status: 400,
      body: { message: { error: 'Title is too long (maximum is 255 characters) and File name is too long (maximum is 255 characters)' } },
    });
    expect(await create({ title: '   ' })).toMatchObject({ status: 400, body: { message: { error: "Title can't be blank" } } });
  });

  it('bounds the content by the snippet_size_limit setting', async () => {
    await withSetting({ snippet_size_limit: 10 }, { snippet_size_limit: 52428800 }, async () => {
      expect(await create({ content: '12345678901' })).toMatchObject({ status: 400, body: { message: { error: 'Content is too long (11 Bytes). The maximum size is 10 Bytes.' } } });
      expect((await create({ content: '1234567890' })).status).toBe(201);
    });
  });

  it('refuses a restricted visibility level (403) but to administrators', async () => {
    await withSetting({ restricted_visibility_levels: ['public'] }, { restricted_visibility_levels: [] }, async () => {
      expect(await create({ visibility: 'public' })).toMatchObject({ status: 403, body: { message: { error: 'Visibility level Public has been restricted by your GitLab administrator' } } });
      expect((await create({ visibility: 'public' }, 'admin')).status).toBe(201);
    });
  });

  permissionMatrix({ 'POST /snippets': { any: { anonymous: 401, external: 403, nonMember: 201, admin: 201, blocked: 403 } } }, async ({ caller }) => (await create({}, caller)).status);
});

describe('GET /snippets/:id, /raw and the lists', () => {
  const ids: Record<'private' | 'internal' | 'public', number> = { private: 0, internal: 0, public: 0 };
  let projectSnippet: number;
  beforeAll(async () => {
    for (const visibility of ['private', 'internal', 'public'] as const) ids[visibility] = (await create({ visibility, title: `${visibility} one`, content: `${visibility}\ncontent` }, 'guest')).body.id;
    const project = await createProject(api, { token: token('guest')!, visibility: 'public' });
    projectSnippet = (await api.post(`/projects/${project.id}/snippets`, { ...body(), visibility: 'public' }, { token: token('guest') })).body.id;
  });

  permissionMatrix(
    {
      'GET /snippets/:id': {
        private: { anonymous: 401, external: 404, nonMember: 404, guest: 200, admin: 200 },
        internal: { anonymous: 401, external: 404, nonMember: 200, guest: 200, admin: 200 },
        public: { anonymous: 401, external: 200, nonMember: 200, guest: 200, admin: 200 },
      },
      'GET /snippets/:id/raw': {
        private: { anonymous: 401, external: 404, nonMember: 404, guest: 200, admin: 200 },
        internal: { anonymous: 401, external: 404, nonMember: 200, guest: 200, admin: 200 },
        public: { anonymous: 401, external: 200, nonMember: 200, guest: 200, admin: 200 },
      },
    },
    async ({ endpoint, caller, visibility }) => {
      const path = endpoint.replace(':id', String(ids[visibility as keyof typeof ids]));
      const res = await api.get(path.replace('GET ', ''), { token: token(caller) });
      if (res.status === 404) expect(res.body).toEqual({ message: '404 Snippet Not Found' });
      if (res.status === 200 && endpoint.endsWith('/raw')) expect(res.text).toBe(`${visibility}\ncontent`);
      return res.status;
    },
  );

  it('serves the raw content as a text/plain attachment', async () => {
    const res = await api.get(`/snippets/${ids.public}/raw`, { token: token('nonMember') });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(res.headers.get('content-disposition')).toBe('attachment');
    expect(res.text).toBe('public\ncontent');
  });

  it('reaches project snippets the caller may read, as a personal snippet with its project', async () => {
    const res = await api.get(`/snippets/${projectSnippet}`, { token: token('nonMember') });
    expect(res.status).toBe(200);
    expect(res.body.project_id).toEqual(expect.any(Number));
    expect(res.body.web_url).toMatch(new RegExp(`/snippets/${projectSnippet}$`));
    expect(res.body.raw_url).toBe(`${res.body.web_url}/raw`);
  });

  it('answers path errors and missing snippets as GitLab does', async () => {
    expect(await api.get('/snippets/abc', { token: token('guest') })).toMatchObject({ status: 400, body: { error: 'id is invalid' } });
    expect(await api.get('/snippets/999999999', { token: token('guest') })).toMatchObject({ status: 404, body: { message: '404 Snippet Not Found' } });
  });

  it("GET /snippets lists the caller's own snippets, personal and of projects, newest first", async () => {
    const res = await api.get('/snippets', { token: token('guest'), query: { per_page: 3 } });
    expect(res.status).toBe(200);
    expect(res.body.map((s: any) => s.id)).toEqual([projectSnippet, ids.public, ids.internal]);
    expect(res.headers.get('x-total')).toBe('4');
    // GitLab 12.10 lists them as Entities::Snippet: no raw_url (Entities::PersonalSnippet's) in the list.
    expect(Object.keys(res.body[1])).toEqual(['id', 'title', 'file_name', 'description', 'visibility', 'author', 'updated_at', 'created_at', 'project_id', 'web_url']);
    expect((await api.get('/snippets')).status).toBe(200);
    expect((await api.get('/snippets', { token: null })).status).toBe(401);
  });

  it('GET /snippets/public lists every public personal snippet, most recent first, to any signed-in user', async () => {
    const res = await api.get('/snippets/public', { token: token('external'), query: { per_page: 100 } });
    expect(res.status).toBe(200);
    const listed = res.body.map((s: any) => s.id);
    expect(listed).toContain(ids.public);
    expect(listed).not.toContain(ids.internal);
    expect(listed).not.toContain(ids.private);
    expect(listed).not.toContain(projectSnippet);
    expect(res.body.every((s: any) => s.visibility === 'public' && s.project_id === null)).toBe(true);
    expect((await api.get('/snippets/public', { token: null })).status).toBe(401);
  });
});

describe('PUT /snippets/:id', () => {
  it('updates what is sent, and appends only the changes', async () => {
    const { body: snippet } = await create({ visibility: 'private' });
    const res = await api.put(`/snippets/${snippet.id}`, { title: 'Renamed', content: 'puts 2', visibility: 'public', description: 'now' }, { token: token('nonMember') });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: snippet.id, title: 'Renamed', visibility: 'public', description: 'now', file_name: 'hello.rb' });
    expect((await api.get(`/snippets/${snippet.id}/raw`, { token: token('nonMember') })).text).toBe('puts 2');
    const events = await api.events(`snippet-${snippet.id}`);
    expect(events[1]).toMatchObject({ type: 'SnippetUpdated', data: { changes: { title: 'Renamed', content: 'puts 2', visibility: 'public', description: 'now' } } });
  });

  it("answers Grape's errors: at least one of title, file_name, content, visibility (not description)", async () => {
    const { body: snippet } = await create();
    const put = (payload: Record<string, unknown>) => api.put(`/snippets/${snippet.id}`, payload, { token: token('nonMember') });
    expect(await put({ description: 'only' })).toMatchObject({ status: 400, body: { error: 'title, file_name, content, visibility are missing, at least one parameter must be provided' } });
    expect(await put({ title: '' })).toMatchObject({ status: 400, body: { error: 'title is empty' } });
    expect(await put({ visibility: 'nope' })).toMatchObject({ status: 400, body: { error: 'visibility does not have a valid value' } });
  });

  it("reaches only the caller's own snippets: another's, even public, and even for an administrator, is 404", async () => {
    const { body: snippet } = await create({ visibility: 'public' });
    for (const role of ['guest', 'admin', 'external'] as const) {
      expect(await api.put(`/snippets/${snippet.id}`, { title: 'x' }, { token: token(role) })).toMatchObject({ status: 404, body: { message: '404 Snippet Not Found' } });
    }
    expect((await api.put(`/snippets/${snippet.id}`, { title: 'x' }, { token: null })).status).toBe(401);
  });
});

describe('DELETE /snippets/:id', () => {
  it('deletes the caller’s own snippet (204), which is then gone', async () => {
    const { body: snippet } = await create({ visibility: 'public' });
    expect((await api.del(`/snippets/${snippet.id}`, { token: token('guest') })).status).toBe(404);
    expect((await api.del(`/snippets/${snippet.id}`, { token: token('admin') })).status).toBe(404);
    const res = await api.del(`/snippets/${snippet.id}`, { token: token('nonMember') });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await api.get(`/snippets/${snippet.id}`, { token: token('admin') })).status).toBe(404);
    expect((await api.events(`snippet-${snippet.id}`)).map((e) => e.type)).toEqual(['SnippetCreated', 'SnippetDeleted']);
  });
});

describe('GET /snippets/:id/user_agent_detail', () => {
  it('answers the user agent and IP of the creating request to administrators', async () => {
    const { body: snippet } = await create({ visibility: 'private' });
    const res = await api.get(`/snippets/${snippet.id}/user_agent_detail`, { token: token('admin') });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ user_agent: 'snippets-spec/1.0', ip_address: expect.stringMatching(/127\.0\.0\.1|::1/), akismet_submitted: false });
    expect((await api.get(`/snippets/${snippet.id}/user_agent_detail`, { token: token('nonMember') })).status).toBe(403);
    expect((await api.get(`/snippets/${snippet.id}/user_agent_detail`, { token: null })).status).toBe(401);
    expect(await api.get('/snippets/999999999/user_agent_detail', { token: token('admin') })).toMatchObject({ status: 404, body: { message: '404 Not found' } });
  });
});

describe('token scopes', () => {
  it('read_api reads snippets; writing needs api', async () => {
    const reader = await withScopes(api, callers.nonMember, ['read_api']);
    const { body: snippet } = await create({ visibility: 'private' });
    expect((await api.get('/snippets', { token: reader.token })).status).toBe(200);
    expect((await api.get(`/snippets/${snippet.id}/raw`, { token: reader.token })).status).toBe(200);
    expect(await api.post('/snippets', body(), { token: reader.token })).toMatchObject({ status: 403, body: { error: 'insufficient_scope' } });
    expect((await api.put(`/snippets/${snippet.id}`, { title: 'x' }, { token: reader.token })).status).toBe(403);
    expect((await api.del(`/snippets/${snippet.id}`, { token: reader.token })).status).toBe(403);
    const project = await createProject(api, { token: token('nonMember')!, visibility: 'private' });
    expect((await api.get(`/projects/${project.id}/snippets`, { token: reader.token })).status).toBe(200);
    expect((await api.post(`/projects/${project.id}/snippets`, { ...body(), visibility: 'private' }, { token: reader.token })).status).toBe(403);
  });
});

describe('a deleted user', () => {
  it('takes their snippets along', async () => {
    const { user, token: own } = await api.createUser({ username: `leaving-${process.pid}` });
    const { body: snippet } = await api.post('/snippets', { ...body(), visibility: 'public' }, { token: own });
    expect((await api.del(`/users/${user.id}`)).status).toBe(204);
    expect((await api.get(`/snippets/${snippet.id}`, { token: token('admin') })).status).toBe(404);
  });
});
