import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { notesProjector } from '../../src/projections/notes/projector.js';
import { createProject, eventually, settled } from '../support/fixtures.js';
import { startIssueWorld, type IssueUser, type IssueVisibility } from '../support/issues.js';
import { expectReplayEquivalence } from '../support/replay.js';
import type { Callers } from '../support/roles.js';
import type { TestServer } from '../support/server.js';

// Issues::MoveService (GitLab 12.10, Issuable::Clone::ContentRewriter): the moved issue's
// notes, user and system, copied onto the new issue with their authors and times, references
// rewritten for the new project, discussions kept; no todo, activity or hook for a copy.

let api: TestServer;
let callers: Callers;
let author: IssueUser;
let assignee: IssueUser;
let projects: Readonly<Record<IssueVisibility, number>>;
let issue: (projectId: number, body?: Record<string, unknown>, token?: string | null) => Promise<number>;
let fromPath: string;

beforeAll(async () => {
  ({ api, callers, author, assignee, projects, issue } = await startIssueWorld());
  fromPath = (await api.get(`/projects/${projects.private}`)).body.path_with_namespace;
}, 300_000);
afterAll(() => api.close());

interface Note {
  id: number;
  body: string;
  system: boolean;
  type: string | null;
  author: { id: number };
  created_at: string;
  updated_at: string;
  noteable_id: number;
  noteable_iid: number;
}

const token = () => callers.reporter.token;
const notesOf = async (projectId: number, iid: number): Promise<Note[]> => {
  const res = await api.get(`/projects/${projectId}/issues/${iid}/notes`, { token: token(), query: { sort: 'asc', per_page: 100 } });
  expect(res.status).toBe(200);
  return res.body;
};
const summary = (notes: readonly Note[]) => notes.map((n) => [n.system, n.body, n.author.id, n.created_at]);

/** An issue in the private project with a history: system notes, a note with references, a discussion with a reply. */
async function issueWithHistory() {
  const other = await issue(projects.private, { title: 'Referenced' });
  const label = await api.post(`/projects/${projects.private}/labels`, { name: `move-${Date.now()}-${Math.random()}`, color: '#ff0000' }, { token: callers.maintainer.token });
  expect(label.status).toBe(201);
  const iid = await issue(projects.private, { title: 'Moving with notes', description: `Follows #${other}, not \`#${other}\`` }, token());
  const path = `/projects/${projects.private}/issues/${iid}`;
  expect((await api.put(path, { title: 'Moving with notes (renamed)', labels: label.body.name }, { token: token() })).status).toBe(200);
  const plain = await api.post(`${path}/notes`, { body: `See #${other} and ~${label.body.id}; @${assignee.username}` }, { token: callers.developer.token });
  expect(plain.status).toBe(201);
  const thread = await api.post(`${path}/discussions`, { body: 'Why move?' }, { token: author.token });
  expect(thread.status).toBe(201);
  const reply = await api.post(`${path}/discussions/${thread.body.id}/notes`, { body: 'Because' }, { token: callers.developer.token });
  expect(reply.status).toBe(201);
  return { iid, other, path, label: label.body as { id: number; name: string }, discussionId: thread.body.id as string };
}

describe('POST /projects/:id/issues/:issue_iid/move copies the notes', () => {
  it('copies user and system notes with authors, times and rewritten references; counts, discussions, GET by id', async () => {
    const { iid, other, path, label, discussionId } = await issueWithHistory();
    const before = await notesOf(projects.private, iid);
    // The note's mention of the assignee makes a todo in a reactor (settled() waits for the
    // worker's start, not for its reactors): counted once it is there.
    const todosBefore = await eventually(async () => {
      const todos = (await api.get('/todos', { token: assignee.token })).body as { action_name: string; body: string }[];
      return todos.some((t) => t.action_name === 'mentioned' && t.body === 'Moving with notes (renamed)') ? todos.length : undefined;
    });

    const moved = await api.post(`${path}/move`, { to_project_id: projects.public }, { token: token() });
    expect(moved.status).toBe(201);
    // The description's references are rewritten too (not the one in a code span).
    expect(moved.body.description).toBe(`Follows ${fromPath}#${other}, not \`#${other}\``);
    expect(moved.body.user_notes_count).toBe(3);
    const newIid = moved.body.iid as number;

    const after = await notesOf(projects.public, newIid);
    const copies = after.slice(0, before.length);
    // The copies, in the original's order, with the original's authors and times, then the new issue's own notes.
    expect(summary(copies)).toEqual(
      before.map((n) => [n.system, n.body.replace(`#${other} and ~${label.id}`, `${fromPath}#${other} and ${fromPath}~${label.id}`).replace(` ~${label.id} label`, ` ${fromPath}~${label.id} label`), n.author.id, n.created_at]),
    );
    expect(copies.map((n) => n.body)).toContain(`See ${fromPath}#${other} and ${fromPath}~${label.id}; @${assignee.username}`);
    expect(copies.filter((n) => n.system).map((n) => n.body)).toEqual(['changed title from **Moving with notes** to **Moving with notes{+ (renamed)+}**', `added ${fromPath}~${label.id} label`]);
    expect(after.slice(before.length).map((n) => n.body)).toEqual([`moved from ${fromPath}#${iid}`]);
    for (const n of copies) expect(n).toMatchObject({ noteable_id: moved.body.id, noteable_iid: newIid });
    expect(new Set(after.map((n) => n.id)).size).toBe(after.length);
    expect(copies.map((n) => n.id).filter((id) => before.some((b) => b.id === id))).toEqual([]);
    // Types kept: the discussion's notes stay DiscussionNotes.
    expect(copies.filter((n) => !n.system).map((n) => n.type)).toEqual([null, 'DiscussionNote', 'DiscussionNote']);

    // GET one copied note; the original's notes are the original's, plus its closing and moving.
    const copy = copies.find((n) => n.body === 'Why move?')!;
    const one = await api.get(`/projects/${projects.public}/issues/${newIid}/notes/${copy.id}`, { token: token() });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: copy.id, body: 'Why move?', author: { id: author.id }, system: false });
    const original = await notesOf(projects.private, iid);
    expect(original.slice(0, before.length)).toEqual(before);
    expect(original.slice(before.length).map((n) => n.body)).toEqual(['closed', `moved to ${(await api.get(`/projects/${projects.public}`)).body.path_with_namespace}#${newIid}`]);

    // The discussion is one discussion of the new issue, under a new id.
    const discussions = await api.get(`/projects/${projects.public}/issues/${newIid}/discussions`, { token: token(), query: { per_page: 100 } });
    expect(discussions.status).toBe(200);
    const thread = discussions.body.find((d: { notes: Note[] }) => d.notes[0]!.body === 'Why move?');
    expect(thread).toMatchObject({ individual_note: false, notes: [{ body: 'Why move?' }, { body: 'Because' }] });
    expect(thread.id).not.toBe(discussionId);
    expect(discussions.body.filter((d: { individual_note: boolean }) => d.individual_note).length).toBe(discussions.body.length - 1);
    // A reply to the copied discussion is a reply there.
    const reply = await api.post(`/projects/${projects.public}/issues/${newIid}/discussions/${thread.id}/notes`, { body: 'Moved fine' }, { token: token() });
    expect(reply.status).toBe(201);
    expect((await api.get(`/projects/${projects.public}/issues/${newIid}`, { token: token() })).body.user_notes_count).toBe(4);

    // A copied system note is no more editable than the original; a copied user note is its author's.
    const systemCopy = copies.find((n) => n.system)!;
    expect((await api.put(`/projects/${projects.public}/issues/${newIid}/notes/${systemCopy.id}`, { body: 'x' }, { token: callers.admin.token })).status).toBe(403);
    const edited = await api.put(`/projects/${projects.public}/issues/${newIid}/notes/${copy.id}`, { body: 'Why move? (edited)' }, { token: author.token });
    expect(edited.status).toBe(200);

    // No todo for the copy's mention, no `commented on` event for a copy.
    await settled(api);
    expect((await api.get('/todos', { token: assignee.token })).body.length).toBe(todosBefore);
    const events = await api.get(`/projects/${projects.public}/events`, { token: token(), query: { per_page: 100 } });
    expect(events.status).toBe(200);
    const commented = events.body.filter((e: { action_name: string; note?: { noteable_id: number } }) => e.action_name === 'commented on' && e.note?.noteable_id === moved.body.id);
    expect(commented.map((e: { note: { body: string } }) => e.note.body)).toEqual(['Moved fine']);
  });

  it('a move of an issue without notes copies none; anonymous and guests read the copies as they read the issue', async () => {
    const iid = await issue(projects.private, { title: 'Bare' });
    const moved = await api.post(`/projects/${projects.private}/issues/${iid}/move`, { to_project_id: projects.public }, { token: token() });
    expect(moved.status).toBe(201);
    expect(moved.body.user_notes_count).toBe(0);
    const notes = await notesOf(projects.public, moved.body.iid);
    expect(notes.map((n) => n.body)).toEqual([`moved from ${fromPath}#${iid}`]);
    // The notes API asks for a user (401 anonymous); a guest of the public project reads them.
    expect((await api.get(`/projects/${projects.public}/issues/${moved.body.iid}/notes`, { token: null })).status).toBe(401);
    expect((await api.get(`/projects/${projects.public}/issues/${moved.body.iid}/notes`, { token: callers.guest.token })).status).toBe(200);
  });

  it('rewrites the references the mover reads; one to nothing or to what the mover cannot read stays as written', async () => {
    const secret = await issue(projects.private, { title: 'Secret', confidential: true }, callers.maintainer.token);
    // A private project beside the moved issue's, of which the reporter is no member: `hidden#1` would read `group/hidden#1` from the target.
    const namespace = (await api.get(`/projects/${projects.private}`)).body.namespace;
    const hidden = await createProject(api, { token: callers.owner.token!, visibility: 'private', group: namespace });
    const hiddenIssue = await api.post(`/projects/${hidden.id}/issues`, { title: 'Hidden' }, { token: callers.owner.token });
    expect(hiddenIssue.status).toBe(201);
    const hiddenRef = `${hidden.path_with_namespace.split('/').pop()}#${hiddenIssue.body.iid}`;
    const iid = await issue(projects.private, { title: 'Names others', description: `See #${secret}, #99999 and ${hiddenRef}` }, token());
    const moved = await api.post(`/projects/${projects.private}/issues/${iid}/move`, { to_project_id: projects.public }, { token: token() });
    expect(moved.status).toBe(201);
    // The reporter reads confidential issues (read_confidential_issues): rewritten; #99999 names nothing, the hidden project is not the reporter's: kept.
    expect(moved.body.description).toBe(`See ${fromPath}#${secret}, #99999 and ${hiddenRef}`);
  });

  it('rebuilds the same notes from the log', async () => {
    const { iid, path } = await issueWithHistory();
    const moved = await api.post(`${path}/move`, { to_project_id: projects.internal }, { token: token() });
    expect(moved.status).toBe(201);
    const listed = await notesOf(projects.internal, moved.body.iid);
    expect(listed.length).toBeGreaterThan(4);
    await expectReplayEquivalence(api.handle, [notesProjector]);
    expect(await notesOf(projects.internal, moved.body.iid)).toEqual(listed);
    expect((await api.get(`/projects/${projects.internal}/issues/${moved.body.iid}`, { token: token() })).body.user_notes_count).toBe(3);
    expect(iid).toBeGreaterThan(0);
  });
});
