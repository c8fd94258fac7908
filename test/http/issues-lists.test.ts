import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIssueWorld, type IssueUser, type IssueVisibility } from '../support/issues.js';
import { createGroup, createProject } from '../support/fixtures.js';
import { permissionMatrix } from '../support/matrix.js';
import { grantRoles, type Callers, type Role } from '../support/roles.js';
import type { TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
let author: IssueUser;
let assignee: IssueUser;
let projects: Readonly<Record<IssueVisibility, number>>;
let group: { id: number; full_path: string };
let listed: number;

const titles = (body: { title: string }[]) => body.map((i) => i.title);

beforeAll(async () => {
  let issue;
  ({ api, callers, author, assignee, projects, issue } = await startIssueWorld());
  // A project of its own for the filters: a group of the owner, the roles on the project.
  const g = await createGroup(api, { token: callers.owner.token!, visibility: 'private' });
  group = { id: g.id, full_path: g.full_path };
  const project = await createProject(api, { token: callers.owner.token!, group: g, visibility: 'private' });
  listed = project.id;
  await grantRoles(api, callers, { projects: listed });
  await api.post(`/projects/${listed}/members`, { user_id: author.id, access_level: 10 });
  await api.post(`/projects/${listed}/members`, { user_id: assignee.id, access_level: 10 });
  const milestone = await api.post(`/projects/${listed}/milestones`, { title: 'v1', due_date: '2999-01-01' }, { token: callers.owner.token });
  const dev = callers.developer.token!;
  await issue(listed, { title: 'Alpha crash', labels: 'bug', assignee_ids: [assignee.id], milestone_id: milestone.body.id, due_date: '2030-01-01' }, dev);
  await issue(listed, { title: 'Beta feature', description: 'needs crash handling', labels: 'feature,ui' }, dev);
  await issue(listed, { title: 'Gamma secret', confidential: true });
  const closed = await issue(listed, { title: 'Delta closed', due_date: '2029-01-01' }, dev);
  await api.put(`/projects/${listed}/issues/${closed}`, { state_event: 'close' }, { token: dev });
});
afterAll(() => api.close());

const list = async (query: Record<string, string | number | string[]>, token: string | null = callers.developer.token) => {
  const res = await api.get(`/projects/${listed}/issues`, { token, query });
  expect(res.status, res.text).toBe(200);
  return titles(res.body);
};

describe('GET /projects/:id/issues', () => {
  it('lists newest first with the pagination headers, each without `subscribed`', async () => {
    const res = await api.get(`/projects/${listed}/issues`, { token: callers.developer.token, query: { per_page: 2 } });
    expect(res.status).toBe(200);
    expect(titles(res.body)).toEqual(['Delta closed', 'Gamma secret']);
    expect(res.headers.get('x-total')).toBe('4');
    expect(res.headers.get('x-total-pages')).toBe('2');
    expect(res.headers.get('link')).toContain('rel="next"');
    expect(res.body[0]).not.toHaveProperty('subscribed');
    expect(res.body[0]).toHaveProperty('moved_to_id', null);
  });

  it('filters by state, labels (None/Any), milestone (None/Any/Upcoming), assignee (None/Any/id/username), author, iids, search with in, confidential, not[…]', async () => {
    expect(await list({ state: 'opened' })).toEqual(['Gamma secret', 'Beta feature', 'Alpha crash']);
    expect(await list({ state: 'closed' })).toEqual(['Delta closed']);
    expect(await list({ labels: 'feature,ui' })).toEqual(['Beta feature']);
    expect(await list({ labels: 'None' })).toEqual(['Delta closed', 'Gamma secret']);
    expect(await list({ labels: 'Any' })).toEqual(['Beta feature', 'Alpha crash']);
    expect(await list({ milestone: 'v1' })).toEqual(['Alpha crash']);
    expect(await list({ milestone: 'None' })).toEqual(['Delta closed', 'Gamma secret', 'Beta feature']);
    expect(await list({ milestone: 'Any' })).toEqual(['Alpha crash']);
    expect(await list({ milestone: 'Upcoming' })).toEqual(['Alpha crash']);
    expect(await list({ milestone: 'Started' })).toEqual([]);
    expect(await list({ assignee_id: 'None' })).toEqual(['Delta closed', 'Gamma secret', 'Beta feature']);
    expect(await list({ assignee_id: 'Any' })).toEqual(['Alpha crash']);
    expect(await list({ assignee_id: assignee.id })).toEqual(['Alpha crash']);
    expect(await list({ assignee_username: assignee.username })).toEqual(['Alpha crash']);
    expect(await list({ author_id: author.id })).toEqual(['Gamma secret']);
    expect(await list({ author_username: author.username })).toEqual(['Gamma secret']);
    expect(await list({ iids: ['1', '2'] })).toEqual(['Beta feature', 'Alpha crash']);
    expect(await list({ search: 'crash' })).toEqual(['Beta feature', 'Alpha crash']);
    expect(await list({ search: 'crash', in: 'title' })).toEqual(['Alpha crash']);
    expect(await list({ confidential: 'true' })).toEqual(['Gamma secret']);
    expect(await list({ 'not[labels]': 'bug' })).toEqual(['Delta closed', 'Gamma secret', 'Beta feature']);
    expect(await list({ 'not[author_id]': author.id })).toEqual(['Delta closed', 'Beta feature', 'Alpha crash']);
    expect(await list({ scope: 'created_by_me' }, author.token)).toEqual(['Gamma secret']);
    expect(await list({ scope: 'assigned-to-me' }, assignee.token)).toEqual(['Alpha crash']);
    expect(await list({ created_after: '2999-01-01T00:00:00Z' })).toEqual([]);
  });

  it('orders by created_at, updated_at, due_date, priority, label_priority, popularity, relative_position', async () => {
    expect(await list({ order_by: 'created_at', sort: 'asc' })).toEqual(['Alpha crash', 'Beta feature', 'Gamma secret', 'Delta closed']);
    expect(await list({ order_by: 'due_date', sort: 'asc' })).toEqual(['Delta closed', 'Alpha crash', 'Gamma secret', 'Beta feature']);
    // The milestone's due date first (nulls last), then the id, newest first.
    expect(await list({ order_by: 'priority', sort: 'asc' })).toEqual(['Alpha crash', 'Delta closed', 'Gamma secret', 'Beta feature']);
    for (const order_by of ['updated_at', 'label_priority', 'popularity', 'relative_position']) expect((await list({ order_by })).length).toBe(4);
  });

  it('answers 400 for bad parameters', async () => {
    for (const [query, error] of [
      [{ state: 'merged' }, 'state does not have a valid value'],
      [{ order_by: 'title' }, 'order_by does not have a valid value'],
      [{ assignee_id: 'nobody' }, "assignee_id should be an integer, 'None' or 'Any'"],
      [{ author_id: 1, author_username: 'x' }, 'author_id, author_username are mutually exclusive'],
    ] as const) {
      const res = await api.get(`/projects/${listed}/issues`, { token: callers.developer.token, query });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
    }
  });

  it('hides confidential issues from guests who are neither author nor assignee', async () => {
    expect(await list({}, callers.guest.token)).toEqual(['Delta closed', 'Beta feature', 'Alpha crash']);
    expect(await list({}, author.token)).toEqual(['Delta closed', 'Gamma secret', 'Beta feature', 'Alpha crash']);
    expect(await list({}, callers.reporter.token)).toHaveLength(4);
    expect(await list({}, callers.admin.token)).toHaveLength(4);
  });

  it('not[…]: an author or assignee not found, or assignee None/Any, leaves nothing; labels are none of those named', async () => {
    expect(await list({ 'not[author_username]': 'nobody-at-all' })).toEqual([]);
    expect(await list({ 'not[author_id]': 999999 })).toEqual([]);
    expect(await list({ 'not[assignee_id]': 'None' })).toEqual([]);
    expect(await list({ 'not[assignee_id]': assignee.id })).toEqual(['Delta closed', 'Gamma secret', 'Beta feature']);
    expect(await list({ 'not[assignee_username]': assignee.username })).toEqual(['Delta closed', 'Gamma secret', 'Beta feature']);
    expect(await list({ 'not[labels]': 'bug,feature' })).toEqual(['Delta closed', 'Gamma secret']);
    expect(await list({ 'not[iids]': ['1', '4'] })).toEqual(['Gamma secret', 'Beta feature']);
    // Grape names a nested failure by its full name.
    const bad = await api.get(`/projects/${listed}/issues`, { token: callers.developer.token, query: { 'not[iids]': 'abc', 'not[author_id]': 1, 'not[author_username]': 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'not[iids] is invalid, not[author_id], not[author_username] are mutually exclusive' });
  });

  it('my_reaction_emoji: the caller\'s awards (None, Any, a name); popularity orders by thumbsup', async () => {
    const alpha = (await api.get(`/projects/${listed}/issues`, { token: callers.developer.token, query: { search: 'Alpha' } })).body[0];
    expect((await api.post(`/projects/${listed}/issues/${alpha.iid}/award_emoji`, { name: 'thumbsup' }, { token: callers.developer.token })).status).toBe(201);
    expect(await list({ my_reaction_emoji: 'thumbsup' })).toEqual(['Alpha crash']);
    expect(await list({ my_reaction_emoji: 'Any' })).toEqual(['Alpha crash']);
    expect(await list({ my_reaction_emoji: 'thumbsdown' })).toEqual([]);
    expect(await list({ my_reaction_emoji: 'None' })).toEqual(['Delta closed', 'Gamma secret', 'Beta feature']);
    // Another caller's reactions are theirs; an anonymous caller's filter is ignored.
    expect(await list({ my_reaction_emoji: 'thumbsup' }, callers.reporter.token)).toEqual([]);
    expect(await list({ my_reaction_emoji: 'thumbsup' }, callers.admin.token)).toEqual([]);
    expect(await list({ order_by: 'popularity' })).toEqual(['Alpha crash', 'Delta closed', 'Gamma secret', 'Beta feature']);
    expect((await api.get(`/projects/${listed}/issues_statistics`, { token: callers.developer.token, query: { my_reaction_emoji: 'Any' } })).body).toEqual({ statistics: { counts: { all: 1, closed: 0, opened: 1 } } });
  });

  it('with_labels_details: the labels as LabelBasic', async () => {
    const res = await api.get(`/projects/${listed}/issues`, { token: callers.developer.token, query: { with_labels_details: 'true', labels: 'feature' } });
    expect(res.body.map((i: { labels: unknown }) => i.labels)).toEqual([
      [
        { id: expect.any(Number), name: 'feature', color: expect.any(String), description: null, description_html: '', text_color: expect.any(String) },
        { id: expect.any(Number), name: 'ui', color: expect.any(String), description: null, description_html: '', text_color: expect.any(String) },
      ],
    ]);
  });

  it('breaks created_at ties by the id, newest first, both ways (Issuable#with_order_id_desc)', async () => {
    const at = { created_at: '2001-02-03T04:05:06Z' };
    const first = await api.post(`/projects/${projects.public}/issues`, { title: 'Tie one', ...at }, { token: callers.owner.token });
    const second = await api.post(`/projects/${projects.public}/issues`, { title: 'Tie two', ...at }, { token: callers.owner.token });
    expect([first.body.created_at, second.body.created_at]).toEqual(['2001-02-03T04:05:06.000Z', '2001-02-03T04:05:06.000Z']);
    for (const sort of ['asc', 'desc']) {
      const res = await api.get(`/projects/${projects.public}/issues`, { token: callers.owner.token, query: { order_by: 'created_at', sort, created_before: '2001-12-31T00:00:00Z' } });
      expect(titles(res.body)).toEqual(['Tie two', 'Tie one']);
    }
  });
});

describe('GET /issues and GET /groups/:id/issues', () => {
  it('the global list is the caller\'s own by default, everything visible with scope=all; 401 for anonymous without it', async () => {
    const mine = await api.get('/issues', { token: author.token });
    expect(titles(mine.body)).toEqual(['Gamma secret']);
    expect(mine.body[0].references.relative).toBe(`#${mine.body[0].iid}`);
    expect((await api.get('/issues', { token: null })).status).toBe(401);
    const all = await api.get('/issues', { token: callers.guest.token, query: { scope: 'all', search: 'crash' } });
    expect(titles(all.body)).toEqual(['Beta feature', 'Alpha crash']);
    const anonymous = await api.get('/issues', { token: null, query: { scope: 'all' } });
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.every((i: { confidential: boolean }) => !i.confidential)).toBe(true);
  });

  it('the group list holds its projects\' issues, relative references to the group', async () => {
    const res = await api.get(`/groups/${group.id}/issues`, { token: callers.developer.token });
    expect(res.status).toBe(200);
    expect(titles(res.body)).toEqual(['Delta closed', 'Gamma secret', 'Beta feature', 'Alpha crash']);
    expect(res.body[0].references.relative).toMatch(/^[^/]+#\d+$/);
    expect((await api.get(`/groups/${group.id}/issues`, { token: callers.nonMember.token })).status).toBe(404);
  });
});

describe('GET issues_statistics', () => {
  it('counts all, closed and opened for the project, the group and the caller', async () => {
    const counts = (all: number, closed: number, opened: number) => ({ statistics: { counts: { all, closed, opened } } });
    expect((await api.get(`/projects/${listed}/issues_statistics`, { token: callers.developer.token })).body).toEqual(counts(4, 1, 3));
    expect((await api.get(`/projects/${listed}/issues_statistics`, { token: callers.guest.token })).body).toEqual(counts(3, 1, 2));
    expect((await api.get(`/groups/${group.id}/issues_statistics`, { token: callers.developer.token, query: { labels: 'bug' } })).body).toEqual(counts(1, 0, 1));
    expect((await api.get('/issues_statistics', { token: author.token })).body).toEqual(counts(1, 0, 1));
    expect((await api.get('/issues_statistics', { token: null })).status).toBe(401);
  });

  it('GET /issues_statistics takes the underscored scopes only (its own `scope` declaration), GET /issues both', async () => {
    const hyphenated = await api.get('/issues_statistics', { token: author.token, query: { scope: 'created-by-me' } });
    expect(hyphenated.status).toBe(400);
    expect(hyphenated.body).toEqual({ error: 'scope does not have a valid value' });
    expect((await api.get('/issues', { token: author.token, query: { scope: 'created-by-me' } })).status).toBe(200);
    expect((await api.get(`/projects/${listed}/issues_statistics`, { token: author.token, query: { scope: 'created-by-me' } })).status).toBe(200);
  });
});

describe('permission matrix', () => {
  const ROLES_OF = (status: number, anonymous = status): Partial<Record<Role, number>> => ({ anonymous, nonMember: status, guest: 200, reporter: 200, admin: 200 });
  permissionMatrix(
    {
      'GET /projects/:id/issues': { private: ROLES_OF(404), internal: ROLES_OF(200, 404), public: ROLES_OF(200) },
      'GET /projects/:id/issues_statistics': { private: ROLES_OF(404), internal: ROLES_OF(200, 404), public: ROLES_OF(200) },
    },
    async ({ endpoint, caller, visibility }) => (await api.get(endpoint.slice('GET '.length).replace(':id', String(projects[visibility as IssueVisibility])), { token: callers[caller as Role].token })).status,
  );
});
