import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createGroup, eventually, settled } from '../support/fixtures.js';
import { startMergeRequestWorld, type MergeRequestUser } from '../support/merge-requests.js';
import type { Callers } from '../support/roles.js';
import { onPlan, type TestServer } from '../support/server.js';

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

describe('a note in the activity feed and in todos', () => {
  it('is activity "commented on" with target Note and the note, and mentions make todos', async () => {
    const iid = await mergeRequest(projects.private, 'Mentions');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    await settled(api);
    const note = (await api.post(`${path}/notes`, { body: `@${assignee.username} please look; cc @${callers.reporter.user!.username} and @${callers.nonMember.user!.username}` }, { token: author.token })).body;
    const events = (await api.get(`/projects/${projects.private}/events`, { token: author.token, query: { target_type: 'note' } })).body;
    expect(events).toEqual([
      expect.objectContaining({
        action_name: 'commented on',
        target_id: note.id,
        target_iid: note.id,
        target_type: 'Note',
        target_title: null,
        author_id: author.id,
        note: {
          id: note.id,
          body: note.body,
          attachment: null,
          author: expect.objectContaining({ id: author.id }),
          created_at: note.created_at,
          system: false,
          noteable_id: note.noteable_id,
          noteable_type: 'MergeRequest',
          noteable_iid: iid,
        },
      }),
    ]);
    expect((await api.get(`/projects/${projects.private}/events`, { token: author.token, query: { action: 'commented' } })).body).toHaveLength(1);

    const todosOf = async (token: string | null) => (await api.get('/todos', { token, query: { type: 'MergeRequest' } })).body.filter((t: { target: { iid: number } }) => t.target.iid === iid);
    // The todos reactors run after the commit (asynchronously on PostgreSQL).
    await eventually(async () => ((await todosOf(assignee.token)).length === 2 && (await todosOf(callers.reporter.token)).length === 1 ? true : undefined));
    expect((await todosOf(assignee.token)).map((t: { action_name: string }) => t.action_name)).toEqual(['directly_addressed', 'assigned']);
    expect((await todosOf(callers.reporter.token)).map((t: { action_name: string; author: { id: number } }) => [t.action_name, t.author.id])).toEqual([['mentioned', author.id]]);
    // A user who may not read the merge request gets none.
    expect(await todosOf(callers.nonMember.token)).toEqual([]);

    // The assignee's note marks their pending todos on the merge request done (TodoService#handle_note).
    await api.post(`${path}/notes`, { body: 'Done' }, { token: assignee.token });
    expect(await eventually(async () => ((await todosOf(assignee.token)).length === 0 ? [] : undefined))).toEqual([]);
  });
});

describe('notes on epics', () => {
  it('are GitLab EE\'s /groups/:id/epics/:noteable_id/notes, by the epic id', async () => {
    const group = await createGroup(api, { token: callers.owner.token!, visibility: 'private' });
    await addMember(api, 'groups', group.id, callers.reporter.user!.id, 20);
    const epic = (await api.post(`/groups/${group.id}/epics`, { title: 'Roadmap' }, { token: callers.owner.token })).body;
    const path = `/groups/${group.id}/epics/${epic.id}/notes`;
    const created = await api.post(path, { body: 'On the epic' }, { token: callers.reporter.token });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ body: 'On the epic', noteable_type: 'Epic', noteable_id: epic.id, noteable_iid: null, resolvable: false });
    expect((await api.get(path, { token: callers.reporter.token })).body).toEqual([created.body]);
    expect((await api.get(path, { token: callers.nonMember.token })).status).toBe(404);
    expect((await api.get(`/groups/${group.id}/epics/${epic.id + 999}/notes`, { token: callers.reporter.token })).body).toEqual({ message: '404 Not found' });
    const discussion = await api.post(`/groups/${group.id}/epics/${epic.id}/discussions`, { body: 'Thread' }, { token: callers.reporter.token });
    expect(discussion.status).toBe(201);
    expect(discussion.body.notes[0]).toMatchObject({ type: 'DiscussionNote', resolvable: false });
    expect((await api.put(`${path}/${created.body.id}`, { body: 'edited' }, { token: callers.owner.token })).status).toBe(200);
    expect(await onPlan(api, 'premium', async () => (await api.get(path, { token: callers.reporter.token })).status)).toBe(403);
  });
});
