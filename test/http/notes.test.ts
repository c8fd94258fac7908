import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notesStreamId } from '../../src/domain/notes/events.js';
import { eventually } from '../support/fixtures.js';
import { permissionMatrix } from '../support/matrix.js';
import { startMergeRequestWorld, type MergeRequestUser } from '../support/merge-requests.js';
import type { Callers, Role } from '../support/roles.js';
import type { TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
let author: MergeRequestUser;
let projects: Readonly<Record<'private' | 'public', number>>;
let mergeRequest: (projectId: number, title?: string) => Promise<number>;

beforeAll(async () => {
  ({ api, callers, author, projects, mergeRequest } = await startMergeRequestWorld());
});
afterAll(() => api.close());

const userBasic = (caller: { user: { id: number; username: string } | null }) => expect.objectContaining({ id: caller.user!.id, username: caller.user!.username, state: 'active' });
const ISO = expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

describe('POST /projects/:id/merge_requests/:noteable_id/notes', () => {
  it("creates a note (201) with Entities::Note's fields, appends NoteAdded, and counts it in user_notes_count", async () => {
    const iid = await mergeRequest(projects.private, 'Notes');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    const res = await api.post(`${path}/notes`, { body: 'Looks good' }, { token: callers.reporter.token });
    expect(res.status).toBe(201);
    const mr = (await api.get(path, { token: callers.reporter.token })).body;
    expect(res.body).toEqual({
      id: expect.any(Number),
      type: null,
      body: 'Looks good',
      attachment: null,
      author: userBasic(callers.reporter),
      created_at: ISO,
      updated_at: res.body.created_at,
      system: false,
      noteable_id: mr.id,
      noteable_type: 'MergeRequest',
      resolvable: false,
      noteable_iid: iid,
    });
    expect(Object.keys(res.body)).toEqual(['id', 'type', 'body', 'attachment', 'author', 'created_at', 'updated_at', 'system', 'noteable_id', 'noteable_type', 'resolvable', 'noteable_iid']);
    expect(mr.user_notes_count).toBe(1);
    const events = await api.events(notesStreamId(`merge_request-${mr.id}`));
    expect(events.map((e) => e.type)).toEqual(['NoteAdded']);
    expect(events[0]!.data).toMatchObject({ id: res.body.id, noteable_type: 'MergeRequest', noteable_id: mr.id, author_id: callers.reporter.user!.id, body: 'Looks good', type: null });

    const got = await api.get(`${path}/notes/${res.body.id}`, { token: callers.reporter.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
    const list = await api.get(`${path}/notes`, { token: callers.reporter.token });
    expect(list.body).toEqual([res.body]);
    expect(list.headers.get('x-total')).toBe('1');
  });

  it("answers GitLab's 400s and 404s for bad input", async () => {
    const iid = await mergeRequest(projects.private, 'Bad input');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    const token = callers.developer.token;
    expect((await api.post(`${path}/notes`, {}, { token })).body).toEqual({ error: 'body is missing' });
    const blank = await api.post(`${path}/notes`, { body: '  ' }, { token });
    expect(blank.status).toBe(400);
    expect(blank.body).toEqual({ message: `400 Bad request - Note {:note=>["can't be blank"]}` });
    const invalid = await api.post(`/projects/${projects.private}/merge_requests/abc/notes`, { body: 'x' }, { token });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({ error: 'noteable_id is invalid' });
    const missing = await api.get(`/projects/${projects.private}/merge_requests/9999/notes`, { token });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ message: '404 Not found' });
    const noNote = await api.get(`${path}/notes/12345`, { token });
    expect(noNote.status).toBe(404);
    expect(noNote.body).toEqual({ message: '404 Not found' });
  });

  it('takes created_at from administrators and owners only', async () => {
    const iid = await mergeRequest(projects.private, 'Backdated');
    const path = `/projects/${projects.private}/merge_requests/${iid}/notes`;
    const at = '2019-03-04T05:06:07.000Z';
    expect((await api.post(path, { body: 'admin', created_at: at }, { token: callers.admin.token })).body.created_at).toBe(at);
    expect((await api.post(path, { body: 'owner', created_at: at }, { token: callers.owner.token })).body).toMatchObject({ created_at: at, updated_at: at });
    expect((await api.post(path, { body: 'developer', created_at: at }, { token: callers.developer.token })).body.created_at).not.toBe(at);
  });
});

describe('GET /projects/:id/merge_requests/:noteable_id/notes', () => {
  it('orders by created_at or updated_at, desc by default, and pages', async () => {
    const iid = await mergeRequest(projects.private, 'Order');
    const path = `/projects/${projects.private}/merge_requests/${iid}/notes`;
    const token = callers.developer.token;
    const ids: number[] = [];
    for (const body of ['one', 'two', 'three']) ids.push((await api.post(path, { body }, { token })).body.id);
    await api.put(`${path}/${ids[0]}`, { body: 'one, edited' }, { token });
    const bodies = async (query: string) => (await api.get(`${path}${query}`, { token })).body.map((n: { body: string }) => n.body);
    expect(await bodies('')).toEqual(['three', 'two', 'one, edited']);
    expect(await bodies('?sort=asc')).toEqual(['one, edited', 'two', 'three']);
    expect(await bodies('?order_by=updated_at')).toEqual(['one, edited', 'three', 'two']);
    expect(await bodies('?sort=asc&per_page=2&page=2')).toEqual(['three']);
    expect((await api.get(`${path}?order_by=title`, { token })).body).toEqual({ error: 'order_by does not have a valid value' });
  });
});

describe('PUT and DELETE /projects/:id/merge_requests/:noteable_id/notes/:note_id', () => {
  it('lets the author and maintainers edit and delete, nobody else (403)', async () => {
    const iid = await mergeRequest(projects.private, 'Edit');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    const note = (await api.post(`${path}/notes`, { body: 'mine' }, { token: callers.developer.token })).body;
    const other = await api.put(`${path}/notes/${note.id}`, { body: 'theirs' }, { token: callers.reporter.token });
    expect(other.status).toBe(403);
    expect(other.body).toEqual({ message: '403 Forbidden' });
    const own = await api.put(`${path}/notes/${note.id}`, { body: 'mine, edited' }, { token: callers.developer.token });
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ id: note.id, body: 'mine, edited', created_at: note.created_at });
    expect((await api.put(`${path}/notes/${note.id}`, { body: 'by a maintainer' }, { token: callers.maintainer.token })).status).toBe(200);
    expect((await api.del(`${path}/notes/${note.id}`, { token: callers.reporter.token })).status).toBe(403);
    expect((await api.del(`${path}/notes/${note.id}`, { token: callers.developer.token })).status).toBe(204);
    expect((await api.get(`${path}/notes/${note.id}`, { token: callers.developer.token })).status).toBe(404);
    expect((await api.get(path, { token: callers.developer.token })).body.user_notes_count).toBe(0);
  });
});

describe('system notes', () => {
  it("fall out of the merge request's events, in GitLab 12's words, in created order", async () => {
    const iid = await mergeRequest(projects.private, 'Add a');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    const token = callers.maintainer.token;
    const milestone = (await api.post(`/projects/${projects.private}/milestones`, { title: 'v1' }, { token })).body;
    expect((await api.put(path, { title: 'WIP: Add b' }, { token })).status).toBe(200);
    await api.post(`${path}/notes`, { body: 'a user note' }, { token });
    const labelled = (await api.put(path, { labels: 'bug,ui', milestone_id: milestone.id, assignee_ids: [callers.developer.user!.id] }, { token })).body;
    await api.put(path, { labels: 'ui', discussion_locked: true, description: 'Some text' }, { token });
    await api.put(path, { state_event: 'close' }, { token });
    await api.put(path, { state_event: 'reopen' }, { token });
    await api.post(`${path}/time_estimate`, { duration: '1h' }, { token });
    await api.post(`${path}/add_spent_time`, { duration: '30m' }, { token });
    await api.post(`${path}/add_spent_time`, { duration: '-10m' }, { token });
    await api.post(`${path}/reset_spent_time`, undefined, { token });

    const notes = (await api.get(`${path}/notes?sort=asc`, { token })).body;
    const labels = await api.get(`/projects/${projects.private}/labels`, { token });
    const labelId = (name: string) => labels.body.find((l: { name: string }) => l.name === name).id;
    expect(labelled.labels).toEqual(['bug', 'ui']);
    const [bug, ui] = [labelId('bug'), labelId('ui')].sort((a, b) => a - b).map((id) => (id === labelId('bug') ? 'bug' : 'ui'));
    expect(notes.map((n: { body: string; system: boolean }) => [n.system, n.body])).toEqual([
      [true, 'marked as a **Work In Progress**'],
      [true, 'changed title from **Add {-a-}** to **{+WIP: +}Add {+b+}**'],
      [false, 'a user note'],
      [true, `changed milestone to %${milestone.iid}`],
      [true, `added ~${labelId(bug!)} ~${labelId(ui!)} labels`],
      [true, `assigned to @${callers.developer.user!.username} and unassigned @mr-assignee`],
      [true, 'changed the description'],
      [true, 'locked this merge request'],
      [true, `removed ~${labelId('bug')} label`],
      [true, 'closed'],
      [true, 'reopened'],
      [true, 'changed time estimate to 1h'],
      [true, 'added 30m of time spent'],
      [true, 'subtracted 10m of time spent'],
      [true, 'removed time spent'],
    ]);
    const system = notes[0];
    expect(system).toMatchObject({ type: null, system: true, author: userBasic(callers.maintainer), noteable_type: 'MergeRequest', noteable_iid: iid, resolvable: false });
    expect((await api.get(`${path}/notes/${system.id}`, { token })).body).toEqual(system);
    // A system note is no user's to edit; user_notes_count counts the one user note.
    expect((await api.put(`${path}/notes/${system.id}`, { body: 'x' }, { token })).status).toBe(403);
    expect((await api.get(path, { token })).body.user_notes_count).toBe(1);
  });

  it('adds "added N commits" when the source branch moves, and "merged"', async () => {
    const project = projects.public;
    const token = callers.maintainer.token;
    await api.post(`/projects/${project}/repository/commits`, { branch: 'topic-notes', start_branch: 'master', commit_message: 'First', actions: [{ action: 'create', file_path: 'n1.txt', content: '1\n' }] }, { token });
    const mr = (await api.post(`/projects/${project}/merge_requests`, { title: 'Topic', source_branch: 'topic-notes', target_branch: 'master' }, { token })).body;
    const before = mr.sha as string;
    const pushed = await api.post(`/projects/${project}/repository/commits`, { branch: 'topic-notes', commit_message: 'Second <b>\n\nbody', actions: [{ action: 'create', file_path: 'n2.txt', content: '2\n' }] }, { token });
    expect(pushed.status).toBe(201);
    // The merge request's refresh after a push is a reactor (asynchronous on PostgreSQL).
    const versions = await eventually(async () => {
      const listed = (await api.get(`/projects/${project}/merge_requests/${mr.iid}/versions`, { token })).body;
      return listed.length === 2 ? listed : undefined;
    });
    expect((await api.put(`/projects/${project}/merge_requests/${mr.iid}/merge`, {}, { token })).status).toBe(200);
    const notes = (await api.get(`/projects/${project}/merge_requests/${mr.iid}/notes?sort=asc`, { token })).body;
    const projectPath = (await api.get(`/projects/${project}`, { token })).body.path_with_namespace;
    // The merge commit's message ("See merge request …!n") mentions the merge request (ProcessCommitWorker, after the merge).
    const merged = (await api.get(`/projects/${project}/merge_requests/${mr.iid}`, { token })).body;
    expect(notes.map((n: { body: string }) => n.body)).toEqual([
      `added 1 commit\n\n<ul><li>${pushed.body.id.slice(0, 8)} - Second &lt;b&gt;</li></ul>\n\n[Compare with previous version](/${projectPath}/-/merge_requests/${mr.iid}/diffs?diff_id=${versions[0].id}&start_sha=${before})`,
      'merged',
      `mentioned in commit ${merged.merge_commit_sha}`,
    ]);
  });
});

describe('locked discussions', () => {
  it('let members comment and refuse others (403)', async () => {
    const iid = await mergeRequest(projects.public, 'Locked');
    const path = `/projects/${projects.public}/merge_requests/${iid}`;
    expect((await api.post(`${path}/notes`, { body: 'open' }, { token: callers.nonMember.token })).status).toBe(201);
    await api.put(path, { discussion_locked: true }, { token: callers.maintainer.token });
    expect((await api.post(`${path}/notes`, { body: 'closed' }, { token: callers.nonMember.token })).status).toBe(403);
    expect((await api.post(`${path}/notes`, { body: 'member' }, { token: callers.guest.token })).status).toBe(201);
    expect((await api.get(`${path}/notes`, { token: callers.nonMember.token })).status).toBe(200);
  });
});

type Visibility = 'private' | 'public';
const notesPath = { private: '', public: '' };
const noteIds = { private: 0, public: 0 };

describe('permissions', () => {
  beforeAll(async () => {
    for (const visibility of ['private', 'public'] as const) {
      const iid = await mergeRequest(projects[visibility], `Matrix ${visibility}`);
      notesPath[visibility] = `/projects/${projects[visibility]}/merge_requests/${iid}/notes`;
      noteIds[visibility] = (await api.post(notesPath[visibility], { body: 'by the author' }, { token: author.token })).body.id;
    }
  });

  permissionMatrix<Role, Visibility>(
    {
      'GET /projects/:id/merge_requests/:noteable_id/notes': {
        private: { anonymous: 401, nonMember: 404, guest: 404, reporter: 200, developer: 200, admin: 200, external: 404 },
        public: { anonymous: 401, nonMember: 200, guest: 200, reporter: 200, external: 200 },
      },
      'POST /projects/:id/merge_requests/:noteable_id/notes': {
        private: { anonymous: 401, nonMember: 404, guest: 404, reporter: 201, developer: 201, maintainer: 201, owner: 201, admin: 201 },
        public: { anonymous: 401, nonMember: 201, guest: 201, external: 201, blocked: 403 },
      },
      'PUT /projects/:id/merge_requests/:noteable_id/notes/:note_id': {
        private: { nonMember: 404, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200 },
        public: { anonymous: 401, nonMember: 403, guest: 403, maintainer: 200 },
      },
    },
    async ({ endpoint, caller, visibility }) => {
      const token = callers[caller].token;
      const [method] = endpoint.split(' ');
      const path = notesPath[visibility];
      const res =
        method === 'GET'
          ? await api.get(path, { token })
          : method === 'POST'
            ? await api.post(path, { body: `by ${caller}` }, { token })
            : await api.put(`${path}/${noteIds[visibility]}`, { body: `edited by ${caller}` }, { token });
      if (res.status === 404) expect(res.body).toEqual({ message: res.body.message.includes('Project') ? '404 Project Not Found' : '404 Not found' });
      return res.status;
    },
  );
});
