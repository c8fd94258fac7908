import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECTORS } from '../../src/projections/registry.js';
import { rebuildProjections } from '../../src/projections/rebuild.js';
import { addMember, createGroup, createProject, eventually, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, withScopes, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

// The command clock: every event is dated by it, and the feeds' retention is judged on it.
let clock = new Date('2024-03-10T12:00:00.000Z');
const at = (iso: string) => (clock = new Date(iso));

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer({}, { now: () => clock });
  await settled(api);
});
afterAll(() => api.close());

let counter = 0;
const unique = (prefix: string) => `${prefix}${++counter}x${process.pid}`;

async function user(attributes: Record<string, unknown> = {}, scopes = ['api']) {
  const { user, token } = await api.createUser({ username: unique('u'), ...attributes }, scopes);
  return { ...user, token } as { id: number; username: string; name: string; token: string };
}

const reference = (u: { id: number; username: string; name: string }) => ({
  id: u.id,
  name: u.name,
  username: u.username,
  state: 'active',
  avatar_url: expect.stringMatching(/^https:\/\/www\.gravatar\.com\/avatar\/[0-9a-f]{32}\?s=80&d=identicon$/),
  web_url: `${api.url}/${u.username}`,
});

const actions = (body: any[]) => body.map((e) => `${e.action_name} ${e.project_id ?? '-'} ${e.target_type ?? '-'} ${e.target_id ?? '-'} by ${e.author_username}`);

describe('GET /events', () => {
  it("answers the caller's own activity as GitLab's Entities::Event", async () => {
    const alice = await user();
    at('2024-03-10T12:00:01.000Z');
    const project = await createProject(api, { token: alice.token });
    const res = await api.get('/events', { token: alice.token });
    expect(res.status).toBe(200);
    // GitLab's ProjectMember#post_create_hook: the owner added with the project is no join.
    expect(res.body).toEqual([
      {
        title: null,
        project_id: project.id,
        action_name: 'created',
        target_id: null,
        target_iid: null,
        target_type: null,
        author_id: alice.id,
        target_title: null,
        created_at: '2024-03-10T12:00:01.000Z',
        author: reference(alice),
        author_username: alice.username,
        data: null,
      },
    ]);
    expect(Object.keys(res.body[0])).toEqual([
      'title', 'project_id', 'action_name', 'target_id', 'target_iid', 'target_type', 'author_id', 'target_title', 'created_at', 'author', 'author_username', 'data',
    ]);
    expect(res.headers.get('x-total')).toBe('1');
  });

  it('needs authentication', async () => {
    expect(await api.get('/events', { token: null })).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect(await api.get('/events', { token: 'nope' })).toMatchObject({ status: 401 });
  });

  it("shows joins and leaves as the member's, whoever added or removed them", async () => {
    const alice = await user();
    const bob = await user();
    const project = await createProject(api, { token: alice.token, visibility: 'public' });
    await addMember(api, 'projects', project.id, bob.id, 30);
    expect((await api.del(`/projects/${project.id}/members/${bob.id}`, { token: alice.token })).status).toBe(204);
    const res = await api.get('/events', { token: bob.token });
    expect(actions(res.body)).toEqual([`left ${project.id} - - by ${bob.username}`, `joined ${project.id} - - by ${bob.username}`]);
    expect(res.body[0]).toMatchObject({ author_id: bob.id, author: reference(bob), target_title: null });
    // Not the administrator's who added bob, nor alice's who removed him.
    expect(actions((await api.get('/events', { token: alice.token })).body)).toEqual([`created ${project.id} - - by ${alice.username}`]);
  });

  it('shows an approved access request as a join', async () => {
    const alice = await user();
    const bob = await user();
    const project = await createProject(api, { token: alice.token, visibility: 'public' });
    expect((await api.post(`/projects/${project.id}/access_requests`, {}, { token: bob.token })).status).toBe(201);
    expect(actions((await api.get('/events', { token: bob.token })).body)).toEqual([]);
    expect((await api.put(`/projects/${project.id}/access_requests/${bob.id}/approve`, {}, { token: alice.token })).status).toBe(201);
    expect(actions((await api.get('/events', { token: bob.token })).body)).toEqual([`joined ${project.id} - - by ${bob.username}`]);
  });

  it("shows a group's creation and memberships with the group as target (not in GitLab 12)", async () => {
    const alice = await user({ can_create_group: true });
    const bob = await user();
    const group = await createGroup(api, { token: alice.token, visibility: 'private' });
    await addMember(api, 'groups', group.id, bob.id, 10);
    const mine = (await api.get('/events', { token: alice.token })).body;
    expect(mine).toEqual([
      expect.objectContaining({ project_id: null, action_name: 'created', target_id: group.id, target_iid: group.id, target_type: 'Group', target_title: group.full_path, author_id: alice.id }),
    ]);
    expect(actions((await api.get('/events', { token: bob.token })).body)).toEqual([`joined - Group ${group.id} by ${bob.username}`]);
    // A private group's events: for who may read the group.
    const stranger = await user();
    expect((await api.get(`/users/${bob.id}/events`, { token: stranger.token })).body).toEqual([]);
    expect((await api.get(`/users/${bob.id}/events`, { token: alice.token })).body).toHaveLength(1);
  });

  it('keeps a deleted project\'s events for its author and administrators only, with its "destroyed"', async () => {
    const alice = await user();
    const bob = await user();
    const project = await createProject(api, { token: alice.token, visibility: 'public' });
    await addMember(api, 'projects', project.id, bob.id, 30);
    expect((await api.del(`/projects/${project.id}`, { token: alice.token })).status).toBe(202);
    const own = (await api.get('/events', { token: alice.token })).body;
    expect(own[0]).toMatchObject({ project_id: project.id, action_name: 'destroyed', target_id: project.id, target_iid: project.id, target_type: 'Project', target_title: project.path_with_namespace });
    expect(actions(own)).toEqual([`destroyed ${project.id} Project ${project.id} by ${alice.username}`, `created ${project.id} - - by ${alice.username}`]);
    // The removal worker finishes the deletion: nothing more, nothing less.
    await eventually(async () => ((await api.get(`/projects/${project.id}`)).status === 404 ? true : undefined));
    expect(actions((await api.get('/events', { token: alice.token })).body)).toEqual(actions(own));
    expect(actions((await api.get(`/users/${alice.id}/events`)).body)).toEqual(actions(own));
    // Bob's join was into a project that is gone: his own, so still his; nobody else's.
    expect((await api.get('/events', { token: bob.token })).body).toHaveLength(1);
    expect((await api.get(`/users/${bob.id}/events`, { token: alice.token })).body).toEqual([]);
    expect((await api.get(`/users/${alice.id}/events`, { token: null })).body).toEqual([]);
    expect((await api.get(`/projects/${project.id}/events`)).status).toBe(404);
  });

  it("drops a deleted user's events, as GitLab's events.author_id ON DELETE CASCADE does", async () => {
    const alice = await user();
    const bob = await user();
    const project = await createProject(api, { token: alice.token, visibility: 'public' });
    await addMember(api, 'projects', project.id, bob.id, 30);
    expect((await api.get(`/projects/${project.id}/events`)).body).toHaveLength(2);
    expect((await api.del(`/users/${bob.id}`)).status).toBe(204);
    expect(actions((await api.get(`/projects/${project.id}/events`)).body)).toEqual([`created ${project.id} - - by ${alice.username}`]);
  });
});

describe('GET /users/:id/events', () => {
  let alice: Awaited<ReturnType<typeof user>>;
  let publicProject: { id: number };
  let privateProject: { id: number };
  beforeAll(async () => {
    alice = await user();
    publicProject = await createProject(api, { token: alice.token, visibility: 'public' });
    privateProject = await createProject(api, { token: alice.token, visibility: 'private' });
  });

  it('shows what the caller may see of the user: public projects to anybody, private ones to members', async () => {
    expect(actions((await api.get(`/users/${alice.id}/events`, { token: null })).body)).toEqual([`created ${publicProject.id} - - by ${alice.username}`]);
    const stranger = await user();
    expect((await api.get(`/users/${alice.id}/events`, { token: stranger.token })).body).toHaveLength(1);
    await addMember(api, 'projects', privateProject.id, stranger.id, 10);
    expect((await api.get(`/users/${alice.id}/events`, { token: stranger.token })).body.map((e: any) => e.project_id)).toEqual([privateProject.id, publicProject.id]);
    expect((await api.get(`/users/${alice.id}/events`)).body.map((e: any) => e.project_id)).toEqual([privateProject.id, publicProject.id]);
  });

  it('takes a username, and answers 404 User Not Found for nobody', async () => {
    expect((await api.get(`/users/${alice.username}/events`, { token: null })).body).toHaveLength(1);
    expect(await api.get('/users/999999/events')).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
    expect(await api.get('/users/no-such-user/events')).toMatchObject({ status: 404, body: { message: '404 User Not Found' } });
  });

  it("is empty for a private profile, except to the user and administrators (EventsFinder's cannot_access_private_profile?)", async () => {
    const hidden = await user({ private_profile: true });
    const project = await createProject(api, { token: hidden.token, visibility: 'public' });
    const other = await user();
    const res = await api.get(`/users/${hidden.id}/events`, { token: other.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(res.headers.get('x-total')).toBe('0');
    expect((await api.get(`/users/${hidden.id}/events`, { token: null })).body).toEqual([]);
    expect((await api.get(`/users/${hidden.id}/events`, { token: hidden.token })).body).toHaveLength(1);
    expect((await api.get(`/users/${hidden.id}/events`)).body).toHaveLength(1);
    // The project's own feed still shows it: the profile hides the user's list only.
    expect((await api.get(`/projects/${project.id}/events`, { token: other.token })).body).toHaveLength(1);
  });
});

describe('filters, order, pagination and retention', () => {
  let alice: Awaited<ReturnType<typeof user>>;
  let project: { id: number; path_with_namespace: string };
  let others: Awaited<ReturnType<typeof user>>[];
  beforeAll(async () => {
    alice = await user();
    at('2024-04-01T10:00:00.000Z');
    project = await createProject(api, { token: alice.token, visibility: 'public' });
    others = [await user(), await user(), await user()];
    at('2024-04-02T00:00:00.000Z');
    await addMember(api, 'projects', project.id, others[0]!.id, 30);
    at('2024-04-02T23:59:59.999Z');
    await addMember(api, 'projects', project.id, others[1]!.id, 30);
    at('2024-04-03T08:00:00.000Z');
    await addMember(api, 'projects', project.id, others[2]!.id, 30);
    expect((await api.del(`/projects/${project.id}/members/${others[2]!.id}`)).status).toBe(204);
  });
  const feed = (query: Record<string, string | number>) => api.get(`/projects/${project.id}/events`, { query });
  const dates = (res: { body: any[] }) => res.body.map((e) => `${e.action_name}@${e.created_at.slice(0, 10)}`);

  it('orders newest first by default, oldest first with sort=asc', async () => {
    expect(dates(await feed({}))).toEqual(['left@2024-04-03', 'joined@2024-04-03', 'joined@2024-04-02', 'joined@2024-04-02', 'created@2024-04-01']);
    expect(dates(await feed({ sort: 'asc' }))).toEqual(['created@2024-04-01', 'joined@2024-04-02', 'joined@2024-04-02', 'joined@2024-04-03', 'left@2024-04-03']);
  });

  it('filters by action and target_type (the events that answer to them, and only those)', async () => {
    expect(dates(await feed({ action: 'joined' }))).toEqual(['joined@2024-04-03', 'joined@2024-04-02', 'joined@2024-04-02']);
    expect(dates(await feed({ action: 'left' }))).toEqual(['left@2024-04-03']);
    expect(dates(await feed({ action: 'created' }))).toEqual(['created@2024-04-01']);
    expect(dates(await feed({ action: 'pushed' }))).toEqual([]);
    expect(dates(await feed({ target_type: 'issue' }))).toEqual([]);
    // A project's creation has no target; a join neither.
    expect(dates(await feed({ target_type: 'project' }))).toEqual([]);
    expect(dates(await feed({ action: 'joined', sort: 'asc' }))).toEqual(['joined@2024-04-02', 'joined@2024-04-02', 'joined@2024-04-03']);
  });

  it('takes before and after as whole days, exclusive (EventsFinder: < beginning_of_day, > end_of_day)', async () => {
    expect(dates(await feed({ before: '2024-04-02' }))).toEqual(['created@2024-04-01']);
    expect(dates(await feed({ after: '2024-04-02' }))).toEqual(['left@2024-04-03', 'joined@2024-04-03']);
    expect(dates(await feed({ after: '2024-04-01', before: '2024-04-03' }))).toEqual(['joined@2024-04-02', 'joined@2024-04-02']);
    expect(dates(await feed({ after: '2024-04-03' }))).toEqual([]);
  });

  it("refuses values outside GitLab's, as Grape does", async () => {
    expect(await feed({ action: 'opened' })).toMatchObject({ status: 400, body: { error: 'action does not have a valid value' } });
    expect(await feed({ target_type: 'Issue' })).toMatchObject({ status: 400, body: { error: 'target_type does not have a valid value' } });
    expect(await feed({ sort: 'up' })).toMatchObject({ status: 400, body: { error: 'sort does not have a valid value' } });
    expect(await feed({ before: '2024-02-30' })).toMatchObject({ status: 400, body: { error: 'before is invalid' } });
    expect(await feed({ after: 'yesterday', per_page: 'x' })).toMatchObject({ status: 400 });
    expect(await api.get('/events', { query: { action: 'nope' }, token: alice.token })).toMatchObject({ status: 400, body: { error: 'action does not have a valid value' } });
    expect(await api.get(`/users/${alice.id}/events`, { query: { target_type: 'epic' } })).toMatchObject({ status: 400, body: { error: 'target_type does not have a valid value' } });
  });

  it("paginates with GitLab's headers", async () => {
    const res = await feed({ per_page: 2, page: 2 });
    expect(dates(res)).toEqual(['joined@2024-04-02', 'joined@2024-04-02']);
    expect(Object.fromEntries(['x-total', 'x-total-pages', 'x-per-page', 'x-page', 'x-next-page', 'x-prev-page'].map((h) => [h, res.headers.get(h)]))).toEqual({
      'x-total': '5',
      'x-total-pages': '3',
      'x-per-page': '2',
      'x-page': '2',
      'x-next-page': '3',
      'x-prev-page': '1',
    });
    const base = `${api.url}/api/v4/projects/${project.id}/events`;
    expect(res.headers.get('link')).toBe(
      `<${base}?per_page=2&page=1>; rel="prev", <${base}?per_page=2&page=3>; rel="next", <${base}?per_page=2&page=1>; rel="first", <${base}?per_page=2&page=3>; rel="last"`,
    );
    expect(dates(await feed({ per_page: 2, page: 3 }))).toEqual(['created@2024-04-01']);
  });

  it('forgets events older than 2 years by the command clock', async () => {
    const before = clock;
    try {
      at('2026-04-02T12:00:00.000Z');
      expect(dates(await feed({}))).toEqual(['left@2024-04-03', 'joined@2024-04-03', 'joined@2024-04-02']);
      expect((await feed({})).headers.get('x-total')).toBe('3');
      at('2026-04-04T00:00:00.000Z');
      expect(dates(await feed({}))).toEqual([]);
    } finally {
      clock = before;
    }
  });

  it('answers the same after every projection is rebuilt from the log: no feed table is written', async () => {
    const calls = [
      () => feed({}),
      () => feed({ sort: 'asc', per_page: 2 }),
      () => api.get('/events', { token: others[2]!.token }),
      () => api.get(`/users/${alice.username}/events`, { token: null }),
      () => api.get(`/users/${others[0]!.id}/events`, { token: others[1]!.token, query: { action: 'joined' } }),
    ];
    const before = await Promise.all(calls.map(async (call) => (await call()).text));
    expect(before.every((text) => text.length > 2)).toBe(true);
    await rebuildProjections(api.handle, PROJECTORS);
    const after = await Promise.all(calls.map(async (call) => (await call()).text));
    expect(after).toEqual(before);
  });
});

describe('scopes', () => {
  it('/events and /users/:id/events take read_user (and api, read_api); /projects/:id/events does not take read_user', async () => {
    const alice = await user();
    const project = await createProject(api, { token: alice.token, visibility: 'public' });
    const caller = { role: 'alice', token: alice.token, user: alice };
    for (const scopes of [['read_user'], ['read_api'], ['api']]) {
      const scoped = await withScopes(api, caller, scopes);
      expect((await api.get('/events', { token: scoped.token })).status).toBe(200);
      expect((await api.get(`/users/${alice.id}/events`, { token: scoped.token })).status).toBe(200);
    }
    const readUser = await withScopes(api, caller, ['read_user']);
    expect(await api.get(`/projects/${project.id}/events`, { token: readUser.token })).toMatchObject({ status: 403, body: { error: 'insufficient_scope', scope: 'api read_api' } });
    const readRepository = await withScopes(api, caller, ['read_repository']);
    expect(await api.get('/events', { token: readRepository.token })).toMatchObject({ status: 403, body: { error: 'insufficient_scope', scope: 'api read_api read_user' } });
  });
});

describe('permissions', () => {
  type Visibility = 'private' | 'internal' | 'public';
  let callers: Callers;
  const projects = new Map<Visibility, number>();
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'internal', 'public'] as const) {
      const id = await sourceWithRoles(api, callers, 'projects', visibility);
      projects.set(visibility, id);
    }
  });

  const all = (status: number, overrides: Partial<Record<Role, number>> = {}) => ({
    anonymous: status, nonMember: status, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200, blocked: 403, external: status, ...overrides,
  });
  const MATRIX: MatrixTable<Role, Visibility> = {
    'GET /projects/:id/events': {
      private: all(404),
      internal: all(404, { nonMember: 200 }),
      public: all(200),
    },
  };
  permissionMatrix(MATRIX, async ({ caller, visibility }) => {
    const res = await api.get(`/projects/${projects.get(visibility)}/events`, { token: callers[caller].token });
    if (res.status === 404) expect(res.body).toEqual({ message: '404 Project Not Found' });
    // The project's creation by the group's owner, and the joins of guest … maintainer.
    if (res.status === 200) expect(res.body.map((e: any) => e.action_name)).toEqual(['joined', 'joined', 'joined', 'joined', 'created']);
    return res.status;
  });

  // What each caller sees of the guest's joins in a user feed: the same rule, event by event.
  const SEEN: Record<Visibility, Partial<Record<Role, boolean>>> = {
    private: { anonymous: false, nonMember: false, external: false, guest: true, maintainer: true, owner: true, admin: true },
    internal: { anonymous: false, nonMember: true, external: false, guest: true, owner: true, admin: true },
    public: { anonymous: true, nonMember: true, external: true, admin: true },
  };
  for (const [visibility, byRole] of Object.entries(SEEN) as [Visibility, Partial<Record<Role, boolean>>][]) {
    for (const [role, seen] of Object.entries(byRole) as [Role, boolean][]) {
      it(`GET /users/:id/events shows a ${visibility} project's event to ${role}: ${seen}`, async () => {
        const res = await api.get(`/users/${callers.guest.user!.id}/events`, { token: callers[role].token });
        expect(res.status).toBe(200);
        expect(res.body.some((e: any) => e.project_id === projects.get(visibility))).toBe(seen);
      });
    }
  }
});

describe('hostile input', () => {
  it.each([
    ['/users/99999999999/events', {}, 404],
    ['/users/%00/events', {}, 400],
    ['/users/a%27%20or%201%3D1--/events', {}, 404],
    ['/projects/99999999999/events', {}, 404],
    ['/events', { action: ['joined', 'left'] }, 400],
    ['/events', { before: '0000-01-01' }, 400],
    ['/events', { after: '10000-01-01' }, 400],
    ['/events', { before: "2024-01-01' or 1=1" }, 400],
    ['/events', { page: 'x' }, 400],
    ['/events', { per_page: -5, page: 99999999 }, 200],
  ] as const)('GET %s %j is %i, never a 500', async (path, query, status) => {
    const res = await api.get(path, { query: query as Record<string, string | number | string[]> });
    expect(res.status).toBe(status);
    if (status === 400 && typeof res.body === 'object') expect(Object.keys(res.body)).toEqual(['error']);
  });
});
