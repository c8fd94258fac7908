import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { run } from '../../src/commands/kernel/run.js';
import { mergeRequests } from '../../src/domain/merge-requests/aggregate.js';

// A merge request opened, closed, reopened and merged is GitLab 12's activity
// (EventCreateService#open_mr / close_mr / reopen_mr / merge_mr): `opened`, `closed`,
// `opened`, `accepted` with the merge request as target, in /projects/:id/events, /events
// and /users/:id/events. Opened, closed and reopened go through the API; the merge is the
// command PUT …/merge issues (that route is another branch's), with the source head
// standing for the merge commit.

let clock = new Date('2024-06-01T08:00:00.000Z');
const tick = () => (clock = new Date(clock.getTime() + 1000));

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer({}, { now: () => clock });
  await settled(api);
});
afterAll(() => api.close());

let counter = 0;
const unique = (prefix: string) => `${prefix}${++counter}x${process.pid}`;

async function user() {
  const { user, token } = await api.createUser({ username: unique('u') });
  return { ...user, token } as { id: number; username: string; name: string; token: string };
}

async function commit(projectId: number, token: string, body: Record<string, unknown>) {
  tick();
  const res = await api.post(`/projects/${projectId}/repository/commits`, { actions: [{ action: 'create', file_path: unique('f'), content: 'x' }], ...body }, { token });
  expect(res.status, res.text).toBe(201);
}

/** A project of `owner` with `master` and `feature` one commit ahead. */
async function projectOf(owner: { token: string }, visibility: 'private' | 'public') {
  tick();
  const res = await api.post('/projects', { name: unique('shop'), visibility }, { token: owner.token });
  expect(res.status, res.text).toBe(201);
  const id = res.body.id as number;
  await commit(id, owner.token, { branch: 'master', commit_message: 'Start' });
  await commit(id, owner.token, { branch: 'feature', start_branch: 'master', commit_message: 'More' });
  return id;
}

async function open(projectId: number, token: string, title: string) {
  tick();
  const res = await api.post(`/projects/${projectId}/merge_requests`, { title, source_branch: 'feature', target_branch: 'master' }, { token });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: number; iid: number; sha: string };
}

async function stateEvent(projectId: number, iid: number, token: string, state_event: 'close' | 'reopen') {
  tick();
  const res = await api.put(`/projects/${projectId}/merge_requests/${iid}`, { state_event }, { token });
  expect(res.status, res.text).toBe(200);
}

async function merge(mr: { id: number; sha: string }, by: { id: number }) {
  tick();
  await run({ ctx: api.runtime.app.commands, metadata: { actor_id: by.id } }, mergeRequests, mr.id, { type: 'MergeMergeRequest', byId: by.id, merge: { mergeCommitSha: mr.sha, squashCommitSha: null } });
}

/** A feed's merge request events as `action_name !iid title (author)`. */
const mrEvents = (body: any[]) => body.filter((e) => e.target_type === 'MergeRequest').map((e) => `${e.action_name} !${e.target_iid} ${e.target_title} (${e.author_username})`);

describe('merge request activity', () => {
  let alice: Awaited<ReturnType<typeof user>>;
  let dev: Awaited<ReturnType<typeof user>>;
  let guest: Awaited<ReturnType<typeof user>>;
  let stranger: Awaited<ReturnType<typeof user>>;
  let privateId: number;
  let publicId: number;
  let mr: { id: number; iid: number; sha: string };
  beforeAll(async () => {
    [alice, dev, guest, stranger] = [await user(), await user(), await user(), await user()];
    privateId = await projectOf(alice, 'private');
    publicId = await projectOf(alice, 'public');
    await addMember(api, 'projects', privateId, dev.id, 30);
    await addMember(api, 'projects', privateId, guest.id, 10);
    // In the private project: the developer opens, the owner closes, the developer reopens, the owner merges.
    mr = await open(privateId, dev.token, 'Private change');
    await stateEvent(privateId, mr.iid, alice.token, 'close');
    await stateEvent(privateId, mr.iid, dev.token, 'reopen');
    // An update is no activity (MergeRequests::UpdateService records no event).
    tick();
    expect((await api.put(`/projects/${privateId}/merge_requests/${mr.iid}`, { description: 'Described' }, { token: dev.token })).status).toBe(200);
    await merge(mr, alice);
    // In the public project: the owner opens one.
    await open(publicId, alice.token, 'Public change');
    await settled(api);
  });

  it('GET /projects/:id/events: opened, closed, opened (reopen), accepted, each with the merge request as target (Entities::Event)', async () => {
    const res = await api.get(`/projects/${privateId}/events`, { token: alice.token, query: { sort: 'asc' } });
    expect(res.status).toBe(200);
    expect(mrEvents(res.body)).toEqual([
      `opened !${mr.iid} Private change (${dev.username})`,
      `closed !${mr.iid} Private change (${alice.username})`,
      `opened !${mr.iid} Private change (${dev.username})`,
      `accepted !${mr.iid} Private change (${alice.username})`,
    ]);
    const accepted = res.body.find((e: any) => e.action_name === 'accepted');
    expect(accepted).toEqual({
      title: null,
      project_id: privateId,
      action_name: 'accepted',
      target_id: mr.id,
      target_iid: mr.iid,
      target_type: 'MergeRequest',
      author_id: alice.id,
      target_title: 'Private change',
      created_at: accepted.created_at,
      author: expect.objectContaining({ id: alice.id, username: alice.username }),
      author_username: alice.username,
      data: null,
    });
    expect(Object.keys(accepted)).toEqual(['title', 'project_id', 'action_name', 'target_id', 'target_iid', 'target_type', 'author_id', 'target_title', 'created_at', 'author', 'author_username', 'data']);
  });

  it('target_type=merge_request and the action filters (Event::ACTIONS: created, closed, reopened, merged)', async () => {
    const feed = async (query: Record<string, string>) =>
      mrEvents((await api.get(`/projects/${privateId}/events`, { token: alice.token, query: { sort: 'asc', ...query } })).body);
    const all = (await api.get(`/projects/${privateId}/events`, { token: alice.token, query: { target_type: 'merge_request', sort: 'asc' } })).body;
    expect(all.map((e: any) => e.target_type)).toEqual(['MergeRequest', 'MergeRequest', 'MergeRequest', 'MergeRequest']); // no pushes, no project creation
    expect(await feed({ action: 'created', target_type: 'merge_request' })).toEqual([`opened !${mr.iid} Private change (${dev.username})`]);
    expect(await feed({ action: 'closed' })).toEqual([`closed !${mr.iid} Private change (${alice.username})`]);
    expect(await feed({ action: 'reopened' })).toEqual([`opened !${mr.iid} Private change (${dev.username})`]);
    expect(await feed({ action: 'merged' })).toEqual([`accepted !${mr.iid} Private change (${alice.username})`]);
    expect((await api.get(`/projects/${privateId}/events`, { token: alice.token, query: { target_type: 'issue' } })).body).toEqual([]);
    expect((await api.get(`/projects/${privateId}/events`, { token: alice.token, query: { target_type: 'merge_requests' } })).status).toBe(400);
  });

  it("GET /events: the caller's own merge request actions", async () => {
    const mine = async (token: string) => mrEvents((await api.get('/events', { token, query: { target_type: 'merge_request', sort: 'asc' } })).body);
    expect(await mine(dev.token)).toEqual([`opened !${mr.iid} Private change (${dev.username})`, `opened !${mr.iid} Private change (${dev.username})`]);
    expect(await mine(alice.token)).toEqual([
      `closed !${mr.iid} Private change (${alice.username})`,
      `accepted !${mr.iid} Private change (${alice.username})`,
      `opened !1 Public change (${alice.username})`,
    ]);
  });

  it("GET /users/:id/events: a private project's merge request events only to those who may read it", async () => {
    const feed = async (userId: number, token: string | null) =>
      (await api.get(`/users/${userId}/events`, { token, query: { target_type: 'merge_request', sort: 'asc' } })).body.map((e: any) => `${e.project_id} ${e.action_name}`);
    expect(await feed(dev.id, null)).toEqual([]);
    expect(await feed(dev.id, stranger.token)).toEqual([]);
    expect(await feed(dev.id, guest.token)).toEqual([`${privateId} opened`, `${privateId} opened`]);
    expect(await feed(dev.id, api.rootToken)).toEqual([`${privateId} opened`, `${privateId} opened`]);
    // The owner's: the private project's to a member, the public one's to anyone.
    expect(await feed(alice.id, stranger.token)).toEqual([`${publicId} opened`]);
    expect(await feed(alice.id, null)).toEqual([`${publicId} opened`]);
    expect(await feed(alice.id, guest.token)).toEqual([`${privateId} closed`, `${privateId} accepted`, `${publicId} opened`]);
  });

  it("hides a private project's feed from outsiders (404) and shows it to its guest", async () => {
    expect(await api.get(`/projects/${privateId}/events`, { token: stranger.token })).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    const res = await api.get(`/projects/${privateId}/events`, { token: guest.token, query: { target_type: 'merge_request' } });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(4);
  });
});
