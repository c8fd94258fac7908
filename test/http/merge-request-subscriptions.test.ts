import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeRequestStreamId } from '../../src/domain/merge-requests/events.js';
import { startMergeRequestWorld, type MergeRequestUser } from '../support/merge-requests.js';
import { permissionMatrix } from '../support/matrix.js';
import { addMember } from '../support/fixtures.js';
import type { Callers, Role } from '../support/roles.js';
import type { TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
let author: MergeRequestUser;
let assignee: MergeRequestUser;
let projects: Readonly<Record<'private' | 'public', number>>;
let mergeRequest: (projectId: number, title?: string) => Promise<number>;

beforeAll(async () => {
  ({ api, callers, author, assignee, projects, mergeRequest } = await startMergeRequestWorld());
});
afterAll(() => api.close());
describe('POST /projects/:id/merge_requests/:iid/subscribe and /unsubscribe', () => {
  it('subscribes (201, the merge request with subscribed: true), then 304; unsubscribes (201, subscribed: false), then 304', async () => {
    const iid = await mergeRequest(projects.private);
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    const token = callers.developer.token;

    const subscribed = await api.post(`${path}/subscribe`, undefined, { token });
    expect(subscribed.status).toBe(201);
    expect(subscribed.body).toMatchObject({ iid, project_id: projects.private, title: 'Add a', subscribed: true, author: { id: author.id } });
    expect((await api.get(path, { token })).body.subscribed).toBe(true);
    const again = await api.post(`${path}/subscribe`, undefined, { token });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');

    const unsubscribed = await api.post(`${path}/unsubscribe`, undefined, { token });
    expect(unsubscribed.status).toBe(201);
    expect(unsubscribed.body).toMatchObject({ iid, subscribed: false });
    expect((await api.post(`${path}/unsubscribe`, undefined, { token })).status).toBe(304);
    expect((await api.get(path, { token })).body.subscribed).toBe(false);
  });

  it('the author and the assignees are subscribed without asking: subscribe is 304, unsubscribe leaves them unsubscribed for good', async () => {
    const iid = await mergeRequest(projects.private, 'Implicit');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    for (const user of [author, assignee]) {
      expect((await api.post(`${path}/subscribe`, undefined, { token: user.token })).status).toBe(304);
      const off = await api.post(`${path}/unsubscribe`, undefined, { token: user.token });
      expect(off.status).toBe(201);
      expect(off.body.subscribed).toBe(false);
      expect((await api.post(`${path}/unsubscribe`, undefined, { token: user.token })).status).toBe(304);
      const on = await api.post(`${path}/subscribe`, undefined, { token: user.token });
      expect(on.status).toBe(201);
      expect(on.body.subscribed).toBe(true);
    }
    // The events recorded the explicit choices only.
    const id = (await api.runtime.app.db.selectFrom('merge_requests').select('id').where('project_id', '=', projects.private).where('iid', '=', iid).executeTakeFirstOrThrow()).id;
    const types = (await api.events(mergeRequestStreamId(id))).map((e) => e.type);
    expect(types.filter((t) => t.startsWith('MergeRequestSub') || t.startsWith('MergeRequestUnsub'))).toEqual([
      'MergeRequestUnsubscribed',
      'MergeRequestSubscribed',
      'MergeRequestUnsubscribed',
      'MergeRequestSubscribed',
    ]);
  });

  it('answers 404 for a merge request that does not exist, or an id that is not an iid', async () => {
    for (const iid of ['9999', 'abc', '0', '99999999999']) {
      const res = await api.post(`/projects/${projects.private}/merge_requests/${iid}/subscribe`, undefined, { token: callers.developer.token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: '404 Not found' });
    }
  });

  it('needs a user: 401 anonymous', async () => {
    const iid = await mergeRequest(projects.public, 'Anonymous');
    const res = await api.post(`/projects/${projects.public}/merge_requests/${iid}/subscribe`, undefined, { token: null });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: '401 Unauthorized' });
  });
});

describe('the permission matrix (update_merge_request, as GitLab 12 asks it)', () => {
  let iids: Record<'private' | 'public', number>;
  beforeAll(async () => {
    iids = { private: await mergeRequest(projects.private, 'Matrix'), public: await mergeRequest(projects.public, 'Matrix') };
  });
  const writers = { developer: 201, maintainer: 201, owner: 201, admin: 201 } as const;
  permissionMatrix<Role, 'private' | 'public'>(
    {
      'POST subscribe': {
        private: { anonymous: 401, nonMember: 404, external: 404, guest: 403, reporter: 403, blocked: 403, ...writers },
        public: { anonymous: 401, nonMember: 403, external: 403, guest: 403, reporter: 403, blocked: 403, ...writers },
      },
    },
    async ({ caller, visibility }) => {
      const path = `/projects/${projects[visibility]}/merge_requests/${iids[visibility]}`;
      const token = callers[caller].token;
      const res = await api.post(`${path}/subscribe`, undefined, { token });
      // Leave the merge request as it was for the next cell.
      if (res.status === 201) expect((await api.post(`${path}/unsubscribe`, undefined, { token })).status).toBe(201);
      return res.status;
    },
  );
  permissionMatrix<Role, 'private' | 'public'>(
    {
      'GET participants': {
        private: { anonymous: 404, nonMember: 404, external: 404, guest: 403, reporter: 200, developer: 200, admin: 200 },
        public: { anonymous: 200, nonMember: 200, external: 200, guest: 200, reporter: 200 },
      },
    },
    async ({ caller, visibility }) =>
      (await api.get(`/projects/${projects[visibility]}/merge_requests/${iids[visibility]}/participants`, { token: callers[caller].token })).status,
  );
});

describe('GET /projects/:id/merge_requests/:iid/participants', () => {
  it('lists the author then the assignees (Entities::UserBasic), paginated', async () => {
    const iid = await mergeRequest(projects.public, 'Participants');
    const res = await api.get(`/projects/${projects.public}/merge_requests/${iid}/participants`, { token: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      { id: author.id, name: 'Mr Author', username: 'mr-author', state: 'active', avatar_url: expect.anything(), web_url: `${api.url}/mr-author` },
      { id: assignee.id, name: 'Mr Assignee', username: 'mr-assignee', state: 'active', avatar_url: expect.anything(), web_url: `${api.url}/mr-assignee` },
    ]);
    expect(res.headers.get('x-total')).toBe('2');
    const second = await api.get(`/projects/${projects.public}/merge_requests/${iid}/participants`, { token: null, query: { per_page: 1, page: 2 } });
    expect(second.body.map((u: { id: number }) => u.id)).toEqual([assignee.id]);
    expect(second.headers.get('x-total-pages')).toBe('2');
  });

  it('leaves out a participant who may no longer read the private project', async () => {
    const iid = await mergeRequest(projects.private, 'Removed');
    const removed = await api.del(`/projects/${projects.private}/members/${assignee.id}`);
    expect(removed.status).toBe(204);
    try {
      const res = await api.get(`/projects/${projects.private}/merge_requests/${iid}/participants`, { token: callers.reporter.token });
      expect(res.body.map((u: { id: number }) => u.id)).toEqual([author.id]);
    } finally {
      await addMember(api, 'projects', projects.private, assignee.id, 30);
    }
  });

  it('answers 404 for an unknown iid and 400 for a non-integer one', async () => {
    const missing = await api.get(`/projects/${projects.public}/merge_requests/9999/participants`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Not found' });
    const bad = await api.get(`/projects/${projects.public}/merge_requests/abc/participants`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'merge_request_iid is invalid' });
  });
});
