import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECTORS } from '../../src/projections/registry.js';
import { rebuildProjections } from '../../src/projections/rebuild.js';
import { eventually } from '../support/fixtures.js';
import { startIssueWorld, type IssueUser, type IssueVisibility } from '../support/issues.js';
import { permissionMatrix } from '../support/matrix.js';
import type { Callers, Role } from '../support/roles.js';
import type { TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
let author: IssueUser;
let assignee: IssueUser;
let projects: Readonly<Record<IssueVisibility, number>>;
let issue: (projectId: number, body?: Record<string, unknown>, token?: string | null) => Promise<number>;

beforeAll(async () => {
  ({ api, callers, author, assignee, projects, issue } = await startIssueWorld());
});
afterAll(() => api.close());

const HEX40 = expect.stringMatching(/^[0-9a-f]{40}$/);

describe('notes, discussions and award emoji on /projects/:id/issues/:issue_iid', () => {
  it('comments (201), lists, counts user_notes_count, upvotes and downvotes, threads and awards', async () => {
    const iid = await issue(projects.private, { title: 'Commented' });
    const path = `/projects/${projects.private}/issues/${iid}`;
    const token = callers.developer.token;
    const issueId = (await api.get(path, { token })).body.id;
    const note = await api.post(`${path}/notes`, { body: 'First' }, { token });
    expect(note.status).toBe(201);
    expect(note.body).toMatchObject({ body: 'First', system: false, noteable_id: issueId, noteable_type: 'Issue', noteable_iid: iid, author: { id: callers.developer.user!.id } });
    expect(note.body).not.toHaveProperty('resolved');
    const thread = await api.post(`${path}/discussions`, { body: 'Why?' }, { token: callers.reporter.token });
    expect(thread.status).toBe(201);
    expect(thread.body).toMatchObject({ id: HEX40, individual_note: false, notes: [{ body: 'Why?', type: 'DiscussionNote', noteable_type: 'Issue', noteable_iid: iid }] });
    const reply = await api.post(`${path}/discussions/${thread.body.id}/notes`, { body: 'Because' }, { token });
    expect(reply.status).toBe(201);
    expect((await api.get(`${path}/discussions/${thread.body.id}`, { token })).body.notes.map((n: { body: string }) => n.body)).toEqual(['Why?', 'Because']);
    expect((await api.get(`${path}/notes`, { token, query: { sort: 'asc' } })).body.map((n: { body: string }) => n.body)).toEqual(['First', 'Why?', 'Because']);

    expect((await api.post(`${path}/award_emoji`, { name: 'thumbsup' }, { token })).status).toBe(201);
    expect((await api.post(`${path}/award_emoji`, { name: 'thumbsdown' }, { token: callers.guest.token })).status).toBe(201);
    const onNote = await api.post(`${path}/notes/${note.body.id}/award_emoji`, { name: 'heart' }, { token: callers.guest.token });
    expect(onNote.status).toBe(201);
    expect(onNote.body).toMatchObject({ name: 'heart', awardable_id: note.body.id, awardable_type: 'Note' });
    expect((await api.get(`${path}/award_emoji`, { token })).body.map((a: { awardable_type: string; awardable_id: number }) => [a.awardable_type, a.awardable_id])).toEqual([
      ['Issue', issueId],
      ['Issue', issueId],
    ]);
    expect((await api.get(path, { token })).body).toMatchObject({ user_notes_count: 3, upvotes: 1, downvotes: 1 });
    const listed = (await api.get(`/projects/${projects.private}/issues`, { token })).body.find((i: { iid: number }) => i.iid === iid);
    expect(listed).toMatchObject({ user_notes_count: 3, upvotes: 1, downvotes: 1 });
    expect((await api.get(`/projects/${projects.private}/issues`, { token, query: { order_by: 'popularity' } })).status).toBe(200);

    expect((await api.del(`${path}/notes/${note.body.id}`, { token })).status).toBe(204);
    expect((await api.get(path, { token })).body.user_notes_count).toBe(2);
    expect((await api.get(`/projects/${projects.private}/issues/99999/notes`, { token })).body).toEqual({ message: '404 Not found' });
  });

  it('writes GitLab 12 system notes for the issue events, the same after a rebuild', async () => {
    const token = callers.maintainer.token;
    const milestone = (await api.post(`/projects/${projects.public}/milestones`, { title: 'v9' }, { token })).body;
    const iid = await issue(projects.public, { title: 'Old title', labels: 'sn-a' }, token);
    const path = `/projects/${projects.public}/issues/${iid}`;
    await api.put(path, { title: 'New title', description: 'text', labels: 'sn-b', assignee_ids: [assignee.id], milestone_id: milestone.id, due_date: '2030-06-05' }, { token });
    await api.put(path, { confidential: true, discussion_locked: true }, { token });
    await api.put(path, { state_event: 'close' }, { token });
    await api.put(path, { state_event: 'reopen' }, { token });
    const cleared = await api.put(path, { confidential: false, due_date: '', milestone_id: 0, assignee_ids: [] }, { token });
    expect(cleared.body).toMatchObject({ confidential: false, due_date: null, milestone: null, assignees: [] });
    await api.post(`${path}/time_estimate`, { duration: '1h' }, { token });
    await api.post(`${path}/add_spent_time`, { duration: '30m' }, { token });
    const labels = (await api.get(`/projects/${projects.public}/labels`, { token })).body as { id: number; name: string }[];
    const label = (name: string) => labels.find((l) => l.name === name)!.id;
    const notes = (await api.get(`${path}/notes`, { token, query: { sort: 'asc' } })).body as { body: string; system: boolean; author: { id: number } }[];
    expect(notes.every((n) => n.system && n.author.id === callers.maintainer.user!.id)).toBe(true);
    expect(notes.map((n) => n.body)).toEqual([
      `added ~${label('sn-a')} label`,
      'changed title from **{-Old-} title** to **{+New+} title**',
      'changed the description',
      'changed due date to June 5, 2030',
      `changed milestone to %${milestone.iid}`,
      `added ~${label('sn-b')} and removed ~${label('sn-a')} labels`,
      `assigned to @${assignee.username}`,
      'locked this issue',
      'made the issue confidential',
      'closed',
      'reopened',
      'removed due date',
      'removed milestone',
      `unassigned @${assignee.username}`,
      'made the issue visible to everyone',
      'changed time estimate to 1h',
      'added 30m of time spent',
    ]);
    const calls = [() => api.get(`${path}/notes`, { token }), () => api.get(`${path}/discussions`, { token }), () => api.get(path, { token })];
    const before = await Promise.all(calls.map(async (call) => (await call()).text));
    await rebuildProjections(api.handle, PROJECTORS);
    expect(await Promise.all(calls.map(async (call) => (await call()).text))).toEqual(before);
  });

  it('honours discussion_locked: members comment, non-members get 403', async () => {
    const iid = await issue(projects.public, { title: 'Locked', discussion_locked: true }, callers.maintainer.token);
    const path = `/projects/${projects.public}/issues/${iid}`;
    expect((await api.post(`${path}/notes`, { body: 'member' }, { token: callers.guest.token })).status).toBe(201);
    expect((await api.post(`${path}/notes`, { body: 'outsider' }, { token: callers.nonMember.token })).status).toBe(403);
    expect((await api.post(`${path}/award_emoji`, { name: 'tada' }, { token: callers.nonMember.token })).body).toEqual({ message: '404 Award Emoji Not Found' });
    expect((await api.get(`${path}/notes`, { token: callers.nonMember.token })).status).toBe(200);
  });

  it('mentions in issue notes make todos for those who may read the issue', async () => {
    const todosOf = async (token: string | null, issueId: number) => (await api.get('/todos', { token })).body.filter((t: { target: { id: number } }) => t.target.id === issueId);
    for (const confidential of [false, true]) {
      const iid = await issue(projects.private, { title: `Mentions ${confidential}`, confidential }, callers.reporter.token);
      const path = `/projects/${projects.private}/issues/${iid}`;
      const id = (await api.get(path, { token: callers.reporter.token })).body.id;
      await api.post(`${path}/notes`, { body: `look, @${callers.developer.user!.username} and @${callers.guest.user!.username}` }, { token: callers.reporter.token });
      const todos = await eventually(async () => ((await todosOf(callers.developer.token, id)).length > 0 ? await todosOf(callers.developer.token, id) : undefined));
      expect(todos.map((t: { action_name: string; target_type: string }) => [t.action_name, t.target_type])).toEqual([['mentioned', 'Issue']]);
      // A confidential issue is not the guest's to read: no todo.
      if (confidential) expect(await todosOf(callers.guest.token, id)).toEqual([]);
      else await eventually(async () => ((await todosOf(callers.guest.token, id)).length === 1 ? true : undefined));
    }
  });

  it("hides notes on a confidential issue from the activity feed of those who may not read it", async () => {
    const iid = await issue(projects.public, { title: 'Secret', confidential: true }, callers.reporter.token);
    const note = (await api.post(`/projects/${projects.public}/issues/${iid}/notes`, { body: 'secret note' }, { token: callers.reporter.token })).body;
    const sees = async (token: string | null) => (await api.get(`/projects/${projects.public}/events`, { token, query: { target_type: 'note' } })).body.some((e: { target_id: number }) => e.target_id === note.id);
    expect(await sees(callers.developer.token)).toBe(true);
    expect(await sees(author.token)).toBe(false);
    expect(await sees(callers.nonMember.token)).toBe(false);
    expect((await api.get(`/users/${callers.reporter.user!.id}/events`, { token: callers.guest.token })).body.some((e: { target_id: number }) => e.target_id === note.id)).toBe(false);
  });
});

type Visibility = 'private' | 'public';
const paths = { private: '', public: '' };

describe('permissions on a confidential issue', () => {
  beforeAll(async () => {
    for (const visibility of ['private', 'public'] as const) {
      const iid = await issue(projects[visibility], { title: `Confidential ${visibility}`, confidential: true });
      paths[visibility] = `/projects/${projects[visibility]}/issues/${iid}`;
    }
  });

  // The author (a guest) reads and comments on their own confidential issue; other guests do not see it.
  permissionMatrix<Role | 'author', Visibility>(
    {
      'GET /projects/:id/issues/:noteable_id/notes': {
        private: { anonymous: 401, nonMember: 404, guest: 404, author: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 },
        public: { anonymous: 401, nonMember: 404, guest: 404, external: 404, author: 200, reporter: 200, admin: 200 },
      },
      'POST /projects/:id/issues/:noteable_id/discussions': {
        private: { anonymous: 401, nonMember: 404, guest: 404, author: 201, reporter: 201, developer: 201, owner: 201, admin: 201 },
        public: { nonMember: 404, guest: 404, author: 201, reporter: 201 },
      },
      'POST /projects/:id/issues/:issue_iid/award_emoji': {
        private: { anonymous: 401, nonMember: 404, guest: 404, author: 201, reporter: 201, maintainer: 201, admin: 201 },
        public: { nonMember: 404, guest: 404, author: 201, developer: 201 },
      },
    },
    async ({ endpoint, caller, visibility }) => {
      const token = caller === 'author' ? author.token : callers[caller].token;
      const path = paths[visibility];
      if (endpoint.startsWith('GET')) return (await api.get(`${path}/notes`, { token })).status;
      if (endpoint.endsWith('discussions')) return (await api.post(`${path}/discussions`, { body: 'hi' }, { token })).status;
      return (await api.post(`${path}/award_emoji`, { name: 'thumbsup' }, { token })).status;
    },
  );
});
