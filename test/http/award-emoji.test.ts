import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup } from '../support/fixtures.js';
import { permissionMatrix } from '../support/matrix.js';
import { startMergeRequestWorld } from '../support/merge-requests.js';
import type { Callers, Role } from '../support/roles.js';
import type { TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
let projects: Readonly<Record<'private' | 'public', number>>;
let mergeRequest: (projectId: number, title?: string) => Promise<number>;

beforeAll(async () => {
  ({ api, callers, projects, mergeRequest } = await startMergeRequestWorld());
});
afterAll(() => api.close());

describe('/projects/:id/merge_requests/:merge_request_iid/award_emoji', () => {
  it('awards (201), lists, gets, feeds upvotes and downvotes, and removes (204)', async () => {
    const iid = await mergeRequest(projects.private, 'Awards');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    const token = callers.developer.token;
    const mr = (await api.get(path, { token })).body;
    const award = await api.post(`${path}/award_emoji`, { name: 'thumbsup' }, { token });
    expect(award.status).toBe(201);
    expect(award.body).toEqual({
      id: expect.any(Number),
      name: 'thumbsup',
      user: expect.objectContaining({ id: callers.developer.user!.id, username: callers.developer.user!.username }),
      created_at: expect.any(String),
      updated_at: award.body.created_at,
      awardable_id: mr.id,
      awardable_type: 'MergeRequest',
    });
    await api.post(`${path}/award_emoji`, { name: 'thumbsup' }, { token: callers.reporter.token });
    await api.post(`${path}/award_emoji`, { name: 'thumbsdown' }, { token: callers.maintainer.token });
    await api.post(`${path}/award_emoji`, { name: 'tada' }, { token: callers.maintainer.token });
    expect((await api.get(path, { token })).body).toMatchObject({ upvotes: 2, downvotes: 1 });
    expect((await api.get(`/projects/${projects.private}/merge_requests`, { token })).body.find((m: { iid: number }) => m.iid === iid)).toMatchObject({ upvotes: 2, downvotes: 1 });

    const list = await api.get(`${path}/award_emoji`, { token });
    expect(list.body.map((a: { name: string }) => a.name)).toEqual(['thumbsup', 'thumbsup', 'thumbsdown', 'tada']);
    expect((await api.get(`${path}/award_emoji/${award.body.id}`, { token })).body).toEqual(award.body);

    const again = await api.post(`${path}/award_emoji`, { name: 'thumbsup' }, { token });
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ message: '404 Award Emoji Name has already been taken Not Found' });
    const unknown = await api.post(`${path}/award_emoji`, { name: 'not_an_emoji' }, { token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Award Emoji Name is not included in the list Not Found' });
    expect((await api.post(`${path}/award_emoji`, {}, { token })).body).toEqual({ error: 'name is missing' });

    // Removed by the awarder or an administrator; anybody else is 401, as GitLab's `unauthorized!`.
    const other = await api.del(`${path}/award_emoji/${award.body.id}`, { token: callers.maintainer.token });
    expect(other.status).toBe(401);
    expect(other.body).toEqual({ message: '401 Unauthorized' });
    expect((await api.del(`${path}/award_emoji/${award.body.id}`, { token })).status).toBe(204);
    expect((await api.get(`${path}/award_emoji/${award.body.id}`, { token })).body).toEqual({ message: '404 Not found' });
    expect((await api.get(path, { token })).body).toMatchObject({ upvotes: 1, downvotes: 1 });
  });

  it("awards on a user note, not on a system note", async () => {
    const iid = await mergeRequest(projects.public, 'Note awards');
    const path = `/projects/${projects.public}/merge_requests/${iid}`;
    const token = callers.developer.token;
    const note = (await api.post(`${path}/notes`, { body: 'Nice' }, { token })).body;
    const award = await api.post(`${path}/notes/${note.id}/award_emoji`, { name: 'heart' }, { token: callers.nonMember.token });
    expect(award.status).toBe(201);
    expect(award.body).toMatchObject({ name: 'heart', awardable_id: note.id, awardable_type: 'Note' });
    expect((await api.get(`${path}/notes/${note.id}/award_emoji`, { token })).body).toEqual([award.body]);
    await api.put(path, { state_event: 'close' }, { token });
    const system = (await api.get(`${path}/notes`, { token })).body.find((n: { system: boolean }) => n.system);
    const refused = await api.post(`${path}/notes/${system.id}/award_emoji`, { name: 'heart' }, { token });
    expect(refused.status).toBe(404);
    expect(refused.body).toEqual({ message: '404 Award Emoji Awardable cannot be awarded emoji Not Found' });
    expect((await api.del(`${path}/notes/${note.id}`, { token })).status).toBe(204);
    expect((await api.get(`${path}/notes/${note.id}/award_emoji`, { token })).status).toBe(404);
  });
});

describe('a deleted noteable', () => {
  const awardsOnNote = async (noteId: number) =>
    (await api.handle.db.selectFrom('award_emoji').select('id').where('awardable_type', '=', 'Note').where('awardable_id', '=', String(noteId)).execute()).length;

  it('takes the awards on its notes along, and only those (GitLab: notes and their awards `dependent: :destroy`)', async () => {
    const token = callers.developer.token;
    const project = projects.public;
    const awardedNote = async (path: string) => {
      const note = (await api.post(`${path}/notes`, { body: 'Awarded' }, { token })).body;
      expect((await api.post(`${path}/notes/${note.id}/award_emoji`, { name: 'heart' }, { token })).status).toBe(201);
      return note.id as number;
    };
    const gone = `/projects/${project}/merge_requests/${await mergeRequest(project, 'Deleted with its awards')}`;
    const kept = `/projects/${project}/merge_requests/${await mergeRequest(project, 'Kept with its awards')}`;
    const issue = `/projects/${project}/issues/${(await api.post(`/projects/${project}/issues`, { title: 'Deleted with its awards' }, { token })).body.iid}`;
    const [onGone, onKept, onIssue] = [await awardedNote(gone), await awardedNote(kept), await awardedNote(issue)];
    expect([await awardsOnNote(onGone), await awardsOnNote(onKept), await awardsOnNote(onIssue)]).toEqual([1, 1, 1]);

    expect((await api.del(gone)).status).toBe(204);
    expect((await api.del(issue)).status).toBe(204);
    expect([await awardsOnNote(onGone), await awardsOnNote(onKept), await awardsOnNote(onIssue)]).toEqual([0, 1, 0]);
    expect((await api.get(`${kept}/notes/${onKept}/award_emoji`, { token })).body).toMatchObject([{ name: 'heart', awardable_id: onKept }]);
  });
});

describe('/groups/:id/epics/:epic_iid/award_emoji', () => {
  it('awards on an epic and on its notes, by the epic iid', async () => {
    const group = await createGroup(api, { token: callers.owner.token!, visibility: 'public' });
    const epic = (await api.post(`/groups/${group.id}/epics`, { title: 'Roadmap' }, { token: callers.owner.token })).body;
    const path = `/groups/${group.id}/epics/${epic.iid}/award_emoji`;
    const award = await api.post(path, { name: 'rocket' }, { token: callers.nonMember.token });
    expect(award.status).toBe(201);
    expect(award.body).toMatchObject({ name: 'rocket', awardable_type: 'Epic', awardable_id: epic.id });
    expect((await api.get(path, { token: callers.owner.token })).body).toEqual([award.body]);
    const note = (await api.post(`/groups/${group.id}/epics/${epic.id}/notes`, { body: 'Go' }, { token: callers.owner.token })).body;
    const onNote = await api.post(`/groups/${group.id}/epics/${epic.iid}/notes/${note.id}/award_emoji`, { name: 'thumbsup' }, { token: callers.owner.token });
    expect(onNote.status).toBe(201);
    expect(onNote.body).toMatchObject({ awardable_type: 'Note', awardable_id: note.id });
    expect((await api.get(`/groups/${group.id}/epics/999/award_emoji`, { token: callers.owner.token })).body).toEqual({ message: '404 Not found' });
  });
});

type Visibility = 'private' | 'public';
const paths = { private: '', public: '' };

describe('permissions', () => {
  beforeAll(async () => {
    for (const visibility of ['private', 'public'] as const) {
      const iid = await mergeRequest(projects[visibility], `Matrix ${visibility}`);
      paths[visibility] = `/projects/${projects[visibility]}/merge_requests/${iid}/award_emoji`;
    }
  });

  permissionMatrix<Role, Visibility>(
    {
      'GET /projects/:id/merge_requests/:merge_request_iid/award_emoji': {
        private: { anonymous: 401, nonMember: 404, guest: 404, reporter: 200, admin: 200 },
        public: { anonymous: 401, nonMember: 200, external: 200 },
      },
      'POST /projects/:id/merge_requests/:merge_request_iid/award_emoji': {
        private: { anonymous: 401, nonMember: 404, guest: 404, reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201 },
        public: { nonMember: 201, guest: 201, external: 201 },
      },
    },
    async ({ endpoint, caller, visibility }) => {
      const token = callers[caller].token;
      const res = endpoint.startsWith('GET') ? await api.get(paths[visibility], { token }) : await api.post(paths[visibility], { name: 'rocket' }, { token });
      return res.status;
    },
  );
});
