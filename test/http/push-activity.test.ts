import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENESIS_HASH } from '../../src/eventstore/hash.js';
import { runInlineProjections } from '../../src/commands/kernel/append-steps.js';
import { appendToStream, readStream } from '../../src/eventstore/store.js';
import { inlineProjectors } from '../../src/projections/registry.js';
import { addMember, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

// A push through the API (a commit, a branch created or deleted) is GitLab's PushEvent in the
// activity feeds: "pushed new" / "pushed to" / "deleted" with Entities::PushEventPayload.

let clock = new Date('2024-05-01T08:00:00.000Z');
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

const repo = (projectId: number, rest: string) => `/projects/${projectId}/repository${rest}`;

async function commit(projectId: number, token: string, body: Record<string, unknown>) {
  tick();
  const res = await api.post(repo(projectId, '/commits'), { actions: [{ action: 'create', file_path: unique('f'), content: 'x' }], ...body }, { token });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; parent_ids: string[] };
}

/** The push events of a feed, as `action_name ref (commit_count)`. */
const pushes = (body: any[]) => body.filter((e) => e.push_data).map((e) => `${e.action_name} ${e.push_data.ref} (${e.push_data.commit_count})`);

describe('push activity on GET /projects/:id/events', () => {
  let alice: Awaited<ReturnType<typeof user>>;
  let projectId: number;
  let readme: string;
  beforeAll(async () => {
    alice = await user();
    tick();
    const res = await api.post('/projects', { name: unique('shop'), initialize_with_readme: true, visibility: 'private' }, { token: alice.token });
    expect(res.status, res.text).toBe(201);
    projectId = res.body.id;
    readme = (await api.get(repo(projectId, '/branches/master'), { token: alice.token })).body.commit.id;
  });

  it('shows the README commit of initialize_with_readme as "pushed new" after "created", as Entities::Event with push_data', async () => {
    const res = await api.get(`/projects/${projectId}/events`, { token: alice.token, query: { sort: 'asc' } });
    expect(res.status).toBe(200);
    expect(res.body.map((e: any) => e.action_name)).toEqual(['created', 'pushed new']);
    const event = res.body[1];
    expect(event).toEqual({
      title: null,
      project_id: projectId,
      action_name: 'pushed new',
      target_id: null,
      target_iid: null,
      target_type: null,
      author_id: alice.id,
      target_title: null,
      created_at: res.body[0].created_at,
      author: expect.objectContaining({ id: alice.id, username: alice.username }),
      push_data: { commit_count: 1, action: 'created', ref_type: 'branch', commit_from: null, commit_to: readme, ref: 'master', commit_title: 'Initial commit', ref_count: null },
      author_username: alice.username,
      data: null,
    });
    // Entities::Event's order: push_data after author.
    expect(Object.keys(event)).toEqual([
      'title', 'project_id', 'action_name', 'target_id', 'target_iid', 'target_type', 'author_id', 'target_title', 'created_at', 'author', 'push_data', 'author_username', 'data',
    ]);
    expect(Object.keys(event.push_data)).toEqual(['commit_count', 'action', 'ref_type', 'commit_from', 'commit_to', 'ref', 'commit_title', 'ref_count']);
  });

  it('shows a commit on a branch as "pushed to" from the old head to the new, titled by its first line truncated to 70', async () => {
    const title = `Rework the ${'very '.repeat(20)}long title`;
    const made = await commit(projectId, alice.token, { branch: 'master', commit_message: `  ${title}\n\nThe body is not shown.` });
    const [latest] = (await api.get(`/projects/${projectId}/events`, { token: alice.token })).body;
    expect(latest).toMatchObject({
      action_name: 'pushed to',
      author_id: alice.id,
      created_at: clock.toISOString(),
      push_data: { commit_count: 1, action: 'pushed', ref_type: 'branch', commit_from: readme, commit_to: made.id, ref: 'master', commit_title: `${title.slice(0, 67)}...`, ref_count: null },
    });
    expect(made.parent_ids).toEqual([readme]);
  });

  it('shows a commit that creates its branch as "pushed new" with that commit, and a branch made at a commit as "pushed new" with none', async () => {
    const made = await commit(projectId, alice.token, { branch: 'feature', start_branch: 'master', commit_message: 'Start the feature' });
    tick();
    const res = await api.post(repo(projectId, '/branches'), { branch: 'copy', ref: 'feature' }, { token: alice.token });
    expect(res.status, res.text).toBe(201);
    const [copy, feature] = (await api.get(`/projects/${projectId}/events`, { token: alice.token })).body;
    expect(feature).toMatchObject({
      action_name: 'pushed new',
      push_data: { commit_count: 1, action: 'created', commit_from: null, commit_to: made.id, ref: 'feature', commit_title: 'Start the feature' },
    });
    expect(copy).toMatchObject({
      action_name: 'pushed new',
      push_data: { commit_count: 0, action: 'created', ref_type: 'branch', commit_from: null, commit_to: made.id, ref: 'copy', commit_title: null, ref_count: null },
    });
  });

  it('shows a deleted branch as "deleted": commit_from its last head, commit_to null', async () => {
    const made = await commit(projectId, alice.token, { branch: 'doomed', start_branch: 'master', commit_message: 'Doomed' });
    tick();
    expect((await api.del(repo(projectId, '/branches/doomed'), { token: alice.token })).status).toBe(204);
    const [latest] = (await api.get(`/projects/${projectId}/events`, { token: alice.token })).body;
    expect(latest).toMatchObject({
      action_name: 'deleted',
      target_type: null,
      push_data: { commit_count: 0, action: 'removed', ref_type: 'branch', commit_from: made.id, commit_to: null, ref: 'doomed', commit_title: null, ref_count: null },
    });
  });

  it('records nothing for a refused push', async () => {
    const before = (await api.get(`/projects/${projectId}/events`, { token: alice.token })).body.length;
    // A file that exists: Files::MultiService refuses, the command commits nothing.
    const refused = await api.post(repo(projectId, '/commits'), { branch: 'master', commit_message: 'again', actions: [{ action: 'create', file_path: 'README.md', content: 'x' }] }, { token: alice.token });
    expect(refused.status).toBe(400);
    expect((await api.del(repo(projectId, '/branches/nope'), { token: alice.token })).status).toBe(404);
    expect((await api.get(`/projects/${projectId}/events`, { token: alice.token })).body).toHaveLength(before);
  });

  it('answers action=pushed with the pushes only, newest first, and no target_type with them', async () => {
    const res = await api.get(`/projects/${projectId}/events`, { token: alice.token, query: { action: 'pushed' } });
    expect(res.status).toBe(200);
    expect(pushes(res.body)).toEqual(['deleted doomed (0)', 'pushed new doomed (1)', 'pushed new copy (0)', 'pushed new feature (1)', 'pushed to master (1)', 'pushed new master (1)']);
    expect(res.body.every((e: any) => e.push_data)).toBe(true);
    expect(res.headers.get('x-total')).toBe('6');
    for (const action of ['created', 'commented', 'merged']) {
      expect(pushes((await api.get(`/projects/${projectId}/events`, { token: alice.token, query: { action } })).body)).toEqual([]);
    }
    expect((await api.get(`/projects/${projectId}/events`, { token: alice.token, query: { action: 'pushed', target_type: 'project' } })).body).toEqual([]);
    // Every other event has no push_data key at all.
    const created = (await api.get(`/projects/${projectId}/events`, { token: alice.token, query: { action: 'created' } })).body;
    expect(created.map((e: any) => [e.action_name, 'push_data' in e])).toEqual([['created', false]]);
  });
});

describe('push activity in /events and /users/:id/events', () => {
  let alice: Awaited<ReturnType<typeof user>>;
  let dev: Awaited<ReturnType<typeof user>>;
  let stranger: Awaited<ReturnType<typeof user>>;
  let guest: Awaited<ReturnType<typeof user>>;
  let privateId: number;
  let publicId: number;
  beforeAll(async () => {
    [alice, dev, stranger, guest] = [await user(), await user(), await user(), await user()];
    privateId = (await createProject(api, { token: alice.token, visibility: 'private' })).id;
    publicId = (await createProject(api, { token: alice.token, visibility: 'public' })).id;
    await addMember(api, 'projects', privateId, dev.id, 30);
    await addMember(api, 'projects', privateId, guest.id, 10);
    await commit(privateId, dev.token, { branch: 'main', commit_message: 'Private work' });
    await commit(publicId, alice.token, { branch: 'main', commit_message: 'Public work' });
  });

  it("are the pusher's, in their own /events: the developer's push, not the owner's", async () => {
    const mine = (await api.get('/events', { token: dev.token, query: { action: 'pushed' } })).body;
    expect(mine.map((e: any) => [e.project_id, e.action_name, e.author_username, e.push_data.commit_title])).toEqual([[privateId, 'pushed new', dev.username, 'Private work']]);
    // The first branch of an empty repository: commit_from null, a count of its one commit.
    expect(mine[0].push_data).toMatchObject({ commit_count: 1, action: 'created', commit_from: null, ref: 'main' });
    const owners = (await api.get('/events', { token: alice.token, query: { action: 'pushed' } })).body;
    expect(owners.map((e: any) => e.project_id)).toEqual([publicId]);
  });

  it("shows a user's pushes to whoever may read the project (EventsFinder 12: the project's visibility)", async () => {
    const feed = async (token: string | null) => (await api.get(`/users/${dev.id}/events`, { token, query: { action: 'pushed' } })).body.map((e: any) => e.project_id);
    expect(await feed(null)).toEqual([]);
    expect(await feed(stranger.token)).toEqual([]);
    expect(await feed(guest.token)).toEqual([privateId]);
    expect(await feed(alice.token)).toEqual([privateId]);
    expect(await feed(api.rootToken)).toEqual([privateId]);
    const publicFeed = (await api.get(`/users/${alice.id}/events`, { token: null, query: { action: 'pushed' } })).body;
    expect(publicFeed.map((e: any) => [e.project_id, e.action_name, e.push_data.commit_title])).toEqual([[publicId, 'pushed new', 'Public work']]);
  });

  it("hides a private project's pushes from outsiders on the project feed (404) and shows them to its guest", async () => {
    expect(await api.get(`/projects/${privateId}/events`, { token: stranger.token })).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    const res = await api.get(`/projects/${privateId}/events`, { token: guest.token, query: { action: 'pushed' } });
    expect(res.status).toBe(200);
    expect(pushes(res.body)).toEqual(['pushed new main (1)']);
  });
});

describe('a branch event stored at schema version 1', () => {
  it('is upcast on read: the feed shows it with the count it recorded and no commit_title', async () => {
    const alice = await user();
    const project = await createProject(api, { token: alice.token, visibility: 'private' });
    const sha = 'ab'.repeat(20);
    // What the log held before commit_details: written as the version-1 store did, its inline
    // projections in the same transaction (read back upcast, as today's projectors take it).
    const streamId = `repository-${project.id}`;
    await api.handle.db.transaction().execute(async (trx) => {
      await appendToStream(trx, {
        streamId,
        expectedVersion: 0,
        headHash: GENESIS_HASH,
        events: [{ type: 'BranchCreated', schemaVersion: 1, data: { project_id: project.id, branch: 'legacy', new_sha: sha, commits: [sha] }, index: { projectId: project.id } }],
        metadata: { actor_id: alice.id },
        occurredAt: tick(),
      });
      await runInlineProjections(trx, inlineProjectors(), await readStream(trx, streamId));
    });
    const res = await api.get(`/projects/${project.id}/events`, { token: alice.token, query: { action: 'pushed' } });
    expect(res.status).toBe(200);
    expect(res.body.map((e: any) => [e.action_name, e.author_id, e.push_data])).toEqual([
      ['pushed new', alice.id, { commit_count: 1, action: 'created', ref_type: 'branch', commit_from: null, commit_to: sha, ref: 'legacy', commit_title: null, ref_count: null }],
    ]);
  });
});
