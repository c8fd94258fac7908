import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createGroup, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * The merge request lists over HTTP. Merge requests are opened through the API
 * (POST /projects/:id/merge_requests) on real branches, at times the test's clock sets.
 */

let api: TestServer;
let clock = new Date('2026-01-01T00:00:00Z');
const at = (hours: number) => new Date(Date.UTC(2026, 0, 1, hours)).toISOString();

interface User {
  id: number;
  token: string;
}
let alice: User; // developer of the group, author
let bob: User; // developer of the group, assignee
let carol: User; // no membership
let rita: User; // reporter of the private project only
let gus: User; // guest of the private project only
let group: { id: number };
let subgroup: { id: number };
let projectA: { id: number };
let projectB: { id: number };
let secret: { id: number };
let closedGroupProject: { id: number };
const mr: Record<string, { id: number; iid: number }> = {};

async function project(namespaceId: number, visibility: string, extra: Record<string, unknown> = {}) {
  const res = await api.post('/projects', { name: `p${Math.random().toString(36).slice(2, 8)}`, namespace_id: namespaceId, visibility, initialize_with_readme: true, ...extra });
  if (res.status !== 201) throw new Error(`POST /projects: ${res.status} ${res.text}`);
  return res.body as { id: number };
}

interface OpenOptions {
  description?: string;
  labels?: string;
  milestone_id?: number;
  assignee_ids?: number[];
  target?: string;
}

/** POST /projects/:id/merge_requests as `token`, on a new branch, at `hour` on the test's clock. */
async function open(name: string, projectId: number, token: string, hour: number, title: string, source: string, options: OpenOptions = {}) {
  const branch = await api.post(`/projects/${projectId}/repository/branches`, { branch: source, ref: 'master' });
  if (branch.status !== 201) throw new Error(`branch ${source}: ${branch.status} ${branch.text}`);
  clock = new Date(at(hour));
  const { target, ...fields } = options;
  const res = await api.post(`/projects/${projectId}/merge_requests`, { title, source_branch: source, target_branch: target ?? 'master', ...fields }, { token });
  if (res.status !== 201) throw new Error(`POST merge_requests: ${res.status} ${res.text}`);
  mr[name] = { id: res.body.id, iid: res.body.iid };
  return mr[name]!;
}

const iids = (res: { body: any[] }) => res.body.map((m) => m.iid);
const titles = (res: { body: any[] }) => res.body.map((m) => m.title);
const list = (path: string, query: Record<string, any> = {}, token: string | null = alice.token) => api.get(path, { query, token });
const inA = (query: Record<string, any> = {}, token: string | null = alice.token) => list(`/projects/${projectA.id}/merge_requests`, query, token);

beforeAll(async () => {
  api = await startTestServer({}, { now: () => clock });
  await settled(api);
  const user = async (name: string) => {
    const made = await api.createUser({ username: `${name}${process.pid}` });
    return { id: made.user.id, token: made.token };
  };
  [alice, bob, carol, rita, gus] = (await Promise.all(['alice', 'bob', 'carol', 'rita', 'gus'].map(user))) as [User, User, User, User, User];
  group = await createGroup(api, { visibility: 'public' });
  const sub = await api.post('/groups', { name: `sub${process.pid}`, path: `sub${process.pid}`, parent_id: group.id, visibility: 'public' });
  subgroup = sub.body;
  await addMember(api, 'groups', group.id, alice.id, 30);
  await addMember(api, 'groups', group.id, bob.id, 30);
  projectA = await project(group.id, 'public');
  projectB = await project(subgroup.id, 'public');
  secret = await project(group.id, 'private');
  // Public, with the merge requests feature private: reporters and above only.
  closedGroupProject = await project(group.id, 'public', { merge_requests_access_level: 'private' });
  await addMember(api, 'projects', secret.id, rita.id, 20);
  await addMember(api, 'projects', secret.id, gus.id, 10);

  await api.post(`/projects/${projectA.id}/repository/branches`, { branch: 'develop-base', ref: 'master' });
  await api.post(`/projects/${projectA.id}/labels`, { name: 'bug', color: '#ff0000' });
  await api.post(`/projects/${projectA.id}/labels`, { name: 'feature', color: '#00ff00' });
  const v1 = (await api.post(`/projects/${projectA.id}/milestones`, { title: 'v1' })).body.id;

  const root = api.rootToken;
  await open('one', projectA.id, alice.token, 1, 'WIP: first parser fix', 'f1', { description: 'fixes the parser', labels: 'bug', milestone_id: v1, assignee_ids: [bob.id] });
  await open('two', projectA.id, alice.token, 2, '[WIP] second', 'f2', { description: 'Adds a feature flag', labels: 'bug,feature' });
  await open('three', projectA.id, bob.token, 3, 'Second thoughts', 'f3', { assignee_ids: [alice.id] });
  await open('four', projectA.id, root, 4, 'Wiping the cache', 'f4', { labels: 'feature', target: 'develop-base' });
  await open('five', projectB.id, alice.token, 5, 'Subgroup change', 'g1');
  await open('six', secret.id, root, 6, 'Secret change', 's1', { assignee_ids: [rita.id] });
  await open('seven', closedGroupProject.id, root, 7, 'Reporters only', 'c1');
  // Three is closed at hour 8: its updated_at moves.
  clock = new Date(at(8));
  const closed = await api.put(`/projects/${projectA.id}/merge_requests/${mr.three!.iid}`, { state_event: 'close' }, { token: bob.token });
  if (closed.status !== 200) throw new Error(`close: ${closed.status} ${closed.text}`);
}, 120_000);
afterAll(() => api?.close());

describe('GET /projects/:id/merge_requests', () => {
  it('lists every state by default, newest first, as MergeRequestBasic', async () => {
    const res = await inA();
    expect(res.status).toBe(200);
    expect(iids(res)).toEqual([mr.four!.iid, mr.three!.iid, mr.two!.iid, mr.one!.iid]);
    expect(res.body[3]).toMatchObject({ title: 'WIP: first parser fix', state: 'opened', labels: ['bug'], milestone: { title: 'v1' }, assignee: { id: bob.id }, author: { id: alice.id }, work_in_progress: true });
    expect(res.headers.get('x-total')).toBe('4');
    expect(res.headers.get('x-per-page')).toBe('20');
  });

  it('filters by state', async () => {
    expect(titles(await inA({ state: 'closed' }))).toEqual(['Second thoughts']);
    expect(titles(await inA({ state: 'opened' }))).toEqual(['Wiping the cache', '[WIP] second', 'WIP: first parser fix']);
    expect(iids(await inA({ state: 'merged' }))).toEqual([]);
    expect(iids(await inA({ state: 'locked' }))).toEqual([]);
  });

  it('orders by created_at or updated_at, asc or desc', async () => {
    expect(titles(await inA({ sort: 'asc' }))).toEqual(['WIP: first parser fix', '[WIP] second', 'Second thoughts', 'Wiping the cache']);
    expect(titles(await inA({ order_by: 'updated_at' }))[0]).toBe('Second thoughts');
    expect(titles(await inA({ order_by: 'updated_at', sort: 'asc' }))[3]).toBe('Second thoughts');
  });

  it('filters by labels: all must match; None, No Label and Any', async () => {
    expect(titles(await inA({ labels: 'bug' }))).toEqual(['[WIP] second', 'WIP: first parser fix']);
    expect(titles(await inA({ labels: 'bug,feature' }))).toEqual(['[WIP] second']);
    expect(titles(await inA({ labels: ' feature , bug ' }))).toEqual(['[WIP] second']);
    expect(titles(await inA({ labels: 'feature' }))).toEqual(['Wiping the cache', '[WIP] second']);
    expect(titles(await inA({ labels: 'None' }))).toEqual(['Second thoughts']);
    expect(titles(await inA({ labels: 'No Label' }))).toEqual(['Second thoughts']);
    expect(titles(await inA({ labels: 'any' }))).toEqual(['Wiping the cache', '[WIP] second', 'WIP: first parser fix']);
    expect(iids(await inA({ labels: 'Bug' }))).toEqual([]);
    expect(iids(await inA({ labels: 'bug,nothing' }))).toEqual([]);
    // labels[]=… as an array too.
    expect(titles(await inA({ labels: ['bug', 'feature'] }))).toEqual(['[WIP] second']);
  });

  it('filters by milestone title, None and Any', async () => {
    expect(titles(await inA({ milestone: 'v1' }))).toEqual(['WIP: first parser fix']);
    expect(titles(await inA({ milestone: 'None' }))).toEqual(['Wiping the cache', 'Second thoughts', '[WIP] second']);
    expect(titles(await inA({ milestone: 'Any' }))).toEqual(['WIP: first parser fix']);
    expect(iids(await inA({ milestone: 'v2' }))).toEqual([]);
  });

  it('filters by author, assignee (an id, None, Any), branches and iids', async () => {
    expect(titles(await inA({ author_id: bob.id }))).toEqual(['Second thoughts']);
    expect(iids(await inA({ author_id: 999999 }))).toEqual([]);
    expect(titles(await inA({ assignee_id: bob.id }))).toEqual(['WIP: first parser fix']);
    expect(titles(await inA({ assignee_id: 'None' }))).toEqual(['Wiping the cache', '[WIP] second']);
    expect(titles(await inA({ assignee_id: 'any' }))).toEqual(['Second thoughts', 'WIP: first parser fix']);
    expect(titles(await inA({ source_branch: 'f2' }))).toEqual(['[WIP] second']);
    expect(titles(await inA({ target_branch: 'master' }))).toEqual(['Second thoughts', '[WIP] second', 'WIP: first parser fix']);
    expect(titles(await inA({ target_branch: 'develop-base' }))).toEqual(['Wiping the cache']);
    expect(titles(await inA({ iids: [mr.one!.iid, mr.four!.iid] }))).toEqual(['Wiping the cache', 'WIP: first parser fix']);
  });

  it('filters by inclusive created and updated bounds', async () => {
    expect(titles(await inA({ created_after: at(2), created_before: at(3) }))).toEqual(['Second thoughts', '[WIP] second']);
    expect(titles(await inA({ updated_after: at(8) }))).toEqual(['Second thoughts']);
    expect(titles(await inA({ updated_before: at(1) }))).toEqual(['WIP: first parser fix']);
  });

  it('searches title and description with GitLab’s fuzzy words, and `in`', async () => {
    expect(titles(await inA({ search: 'parser' }))).toEqual(['WIP: first parser fix']);
    expect(titles(await inA({ search: 'SECOND' }))).toEqual(['Second thoughts', '[WIP] second']);
    expect(titles(await inA({ search: 'feature' }))).toEqual(['[WIP] second']);
    expect(iids(await inA({ search: 'feature', in: 'title' }))).toEqual([]);
    expect(titles(await inA({ search: 'fixes parser' }))).toEqual(['WIP: first parser fix']);
    // Fewer than 3 characters: the whole title or description, case-insensitively.
    expect(iids(await inA({ search: 'fi' }))).toEqual([]);
    expect(iids(await inA({ search: '%' }))).toEqual([]);
  });

  it('filters wip yes/no on the title prefixes WIP:, [WIP] and "WIP "', async () => {
    expect(titles(await inA({ wip: 'yes' }))).toEqual(['[WIP] second', 'WIP: first parser fix']);
    expect(titles(await inA({ wip: 'no' }))).toEqual(['Wiping the cache', 'Second thoughts']);
  });

  it('scopes: created_by_me, created-by-me, assigned_to_me, all', async () => {
    expect(titles(await inA({ scope: 'created_by_me' }))).toEqual(['[WIP] second', 'WIP: first parser fix']);
    expect(titles(await inA({ scope: 'created-by-me' }))).toEqual(['[WIP] second', 'WIP: first parser fix']);
    expect(titles(await inA({ scope: 'assigned_to_me' }))).toEqual(['Second thoughts']);
    expect(iids(await inA({ scope: 'all' }))).toHaveLength(4);
    // Anonymous callers have nothing of their own.
    expect(iids(await inA({ scope: 'assigned-to-me' }, null))).toEqual([]);
  });

  it('approver_ids and my_reaction_emoji: no approvers and no award emoji exist', async () => {
    expect(iids(await inA({ approver_ids: 'None' }))).toHaveLength(4);
    expect(iids(await inA({ approver_ids: 'Any' }))).toEqual([]);
    expect(iids(await inA({ approver_ids: [alice.id] }))).toEqual([]);
    expect(iids(await inA({ my_reaction_emoji: 'None' }))).toHaveLength(4);
    expect(iids(await inA({ my_reaction_emoji: 'Any' }))).toEqual([]);
    expect(iids(await inA({ my_reaction_emoji: 'thumbsup' }))).toEqual([]);
    // Anonymous: the filter does not apply (IssuableFinder asks current_user).
    expect(iids(await inA({ my_reaction_emoji: 'thumbsup' }, null))).toHaveLength(4);
  });

  it('view=simple answers MergeRequestSimple', async () => {
    const res = await inA({ view: 'simple', per_page: 1 });
    expect(Object.keys(res.body[0])).toEqual(['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'web_url']);
    expect(res.body[0].created_at).toBe(at(4));
  });

  it('paginates with headers', async () => {
    const res = await inA({ per_page: 3, page: 2 });
    expect(titles(res)).toEqual(['WIP: first parser fix']);
    expect(Object.fromEntries(['x-total', 'x-total-pages', 'x-page', 'x-next-page', 'x-prev-page'].map((h) => [h, res.headers.get(h)]))).toEqual({
      'x-total': '4',
      'x-total-pages': '2',
      'x-page': '2',
      'x-next-page': '',
      'x-prev-page': '1',
    });
    expect(res.headers.get('link')).toContain('rel="first"');
  });

  it('answers Grape’s 400s for bad values, before the project', async () => {
    expect(await inA({ state: 'open' })).toMatchObject({ status: 400, body: { error: 'state does not have a valid value' } });
    expect(await inA({ order_by: 'title' })).toMatchObject({ status: 400, body: { error: 'order_by does not have a valid value' } });
    expect(await inA({ sort: 'up', view: 'full' })).toMatchObject({ status: 400, body: { error: 'sort does not have a valid value, view does not have a valid value' } });
    expect(await inA({ created_after: 'yesterday' })).toMatchObject({ status: 400, body: { error: 'created_after is invalid' } });
    expect(await inA({ author_id: 'me' })).toMatchObject({ status: 400, body: { error: 'author_id is invalid' } });
    expect(await inA({ assignee_id: 'someone' })).toMatchObject({ status: 400, body: { error: "assignee_id should be an integer, 'None' or 'Any'" } });
    expect(await inA({ approver_ids: '5' })).toMatchObject({ status: 400, body: { error: "approver_ids should be an array, 'None' or 'Any'" } });
    expect(await inA({ scope: 'mine' })).toMatchObject({ status: 400, body: { error: 'scope does not have a valid value' } });
    expect(await inA({ wip: 'maybe' })).toMatchObject({ status: 400, body: { error: 'wip does not have a valid value' } });
    expect(await inA({ iids: ['x'] })).toMatchObject({ status: 400, body: { error: 'iids is invalid' } });
    expect(await list('/projects/999999/merge_requests', { state: 'open' })).toMatchObject({ status: 400 });
    expect(await list('/projects/999999/merge_requests')).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });

  it('hides a private project (404) and refuses its guests the merge requests (403)', async () => {
    expect((await list(`/projects/${secret.id}/merge_requests`, {}, carol.token)).status).toBe(404);
    expect((await list(`/projects/${secret.id}/merge_requests`, {}, null)).status).toBe(404);
    expect((await list(`/projects/${secret.id}/merge_requests`, {}, gus.token)).status).toBe(403);
    expect(titles(await list(`/projects/${secret.id}/merge_requests`, {}, rita.token))).toEqual(['Secret change']);
    // A public project is open to anonymous callers.
    expect(iids(await inA({}, null))).toHaveLength(4);
    // A private merge requests feature: reporters and above.
    expect((await list(`/projects/${closedGroupProject.id}/merge_requests`, {}, carol.token)).status).toBe(403);
    expect(titles(await list(`/projects/${closedGroupProject.id}/merge_requests`, {}, alice.token))).toEqual(['Reporters only']);
  });
});

describe('GET /groups/:id/merge_requests', () => {
  it('lists the group’s and its subgroups’ merge requests the caller may read', async () => {
    const all = ['Reporters only', 'Secret change', 'Subgroup change', 'Wiping the cache', 'Second thoughts', '[WIP] second', 'WIP: first parser fix'];
    expect(titles(await list(`/groups/${group.id}/merge_requests`, {}, alice.token))).toEqual(all);
    expect(titles(await list(`/groups/${group.id}/merge_requests`, {}, api.rootToken))).toEqual(all);
    // A non-member and an anonymous caller: neither the private project nor the private feature.
    const open = all.filter((t) => t !== 'Secret change' && t !== 'Reporters only');
    expect(titles(await list(`/groups/${group.id}/merge_requests`, {}, carol.token))).toEqual(open);
    expect(titles(await list(`/groups/${group.id}/merge_requests`, {}, null))).toEqual(open);
    // A guest of the private project does not read its merge requests; its reporter does.
    expect(titles(await list(`/groups/${group.id}/merge_requests`, {}, gus.token))).toEqual(open);
    expect(titles(await list(`/groups/${group.id}/merge_requests`, {}, rita.token))).toEqual(['Secret change', ...open]);
    expect(titles(await list(`/groups/${subgroup.id}/merge_requests`, {}, carol.token))).toEqual(['Subgroup change']);
  });

  it('takes the same filters, and 404s a group the caller may not see', async () => {
    expect(titles(await list(`/groups/${group.id}/merge_requests`, { labels: 'bug', state: 'opened' }))).toEqual(['[WIP] second', 'WIP: first parser fix']);
    expect(titles(await list(`/groups/${group.id}/merge_requests`, { scope: 'assigned_to_me' }, rita.token))).toEqual(['Secret change']);
    const hidden = await createGroup(api, { visibility: 'private' });
    expect(await list(`/groups/${hidden.id}/merge_requests`, {}, carol.token)).toMatchObject({ status: 404, body: { message: '404 Group Not Found' } });
    expect(await list(`/groups/${group.id}/merge_requests`, { state: 'x' })).toMatchObject({ status: 400, body: { error: 'state does not have a valid value' } });
  });
});

describe('GET /merge_requests', () => {
  it('defaults to the caller’s own merge requests', async () => {
    expect(titles(await list('/merge_requests', {}, alice.token))).toEqual(['Subgroup change', '[WIP] second', 'WIP: first parser fix']);
    expect(titles(await list('/merge_requests', { scope: 'assigned_to_me' }, alice.token))).toEqual(['Second thoughts']);
    expect(titles(await list('/merge_requests', { scope: 'assigned-to-me' }, rita.token))).toEqual(['Secret change']);
  });

  it('needs a user without scope=all (401), and shows anonymous callers only public merge requests with it', async () => {
    expect(await list('/merge_requests', {}, null)).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect((await list('/merge_requests', { scope: 'created_by_me' }, null)).status).toBe(401);
    expect((await list('/merge_requests', { scope: 'created-by-me' }, null)).status).toBe(401);
    expect(titles(await list('/merge_requests', { scope: 'all', author_id: alice.id }, null))).toEqual(['Subgroup change', '[WIP] second', 'WIP: first parser fix']);
    const anonymous = titles(await list('/merge_requests', { scope: 'all', per_page: 100 }, null));
    expect(anonymous).not.toContain('Secret change');
    expect(anonymous).not.toContain('Reporters only');
    // Bad input is 400 before the 401.
    expect(await list('/merge_requests', { state: 'x' }, null)).toMatchObject({ status: 400 });
  });

  it('scope=all: every merge request the caller may read, with the filters', async () => {
    const mine = (token: string) => list('/merge_requests', { scope: 'all', created_after: at(0), created_before: at(7), per_page: 100 }, token);
    expect(titles(await mine(carol.token))).toEqual(['Subgroup change', 'Wiping the cache', 'Second thoughts', '[WIP] second', 'WIP: first parser fix']);
    expect(titles(await mine(rita.token))).toContain('Secret change');
    expect(titles(await mine(api.rootToken))).toEqual(['Reporters only', 'Secret change', 'Subgroup change', 'Wiping the cache', 'Second thoughts', '[WIP] second', 'WIP: first parser fix']);
    expect(titles(await list('/merge_requests', { scope: 'all', state: 'opened', labels: 'bug', search: 'second' }, carol.token))).toEqual(['[WIP] second']);
    const paged = await list('/merge_requests', { scope: 'all', created_after: at(0), created_before: at(7), per_page: 2 }, carol.token);
    expect(paged.headers.get('x-total')).toBe('5');
    expect(paged.headers.get('x-next-page')).toBe('2');
  });
});

describe('visibility follows membership changes', () => {
  it('a new reporter of the private project sees its merge requests in the global list', async () => {
    const before = titles(await list('/merge_requests', { scope: 'all', per_page: 100 }, carol.token));
    expect(before).not.toContain('Secret change');
    await addMember(api, 'projects', secret.id, carol.id, 20);
    expect(titles(await list('/merge_requests', { scope: 'all', per_page: 100 }, carol.token))).toContain('Secret change');
  });
});
