import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { PROJECTORS } from '../../src/projections/registry.js';
import { rebuildProjections } from '../../src/projections/rebuild.js';
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

const HEX40 = expect.stringMatching(/^[0-9a-f]{40}$/);

describe('POST and GET /projects/:id/merge_requests/:noteable_id/discussions', () => {
  it('starts a resolvable thread (201), replies, resolves it and lists it among the individual notes', async () => {
    const iid = await mergeRequest(projects.private, 'Threads');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    const token = callers.developer.token;
    const created = await api.post(`${path}/discussions`, { body: 'Why?' }, { token });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: HEX40,
      individual_note: false,
      notes: [expect.objectContaining({ type: 'DiscussionNote', body: 'Why?', system: false, resolvable: true, resolved: false, resolved_by: null, noteable_iid: iid })],
    });
    const id = created.body.id as string;
    const reply = await api.post(`${path}/discussions/${id}/notes`, { body: 'Because.' }, { token: callers.reporter.token });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ type: 'DiscussionNote', body: 'Because.', resolvable: true, resolved: false });

    const resolved = await api.put(`${path}/discussions/${id}`, { resolved: true }, { token });
    expect(resolved.status).toBe(200);
    expect(resolved.body.notes.map((n: { resolved: boolean; resolved_by: { id: number } }) => [n.resolved, n.resolved_by.id])).toEqual([
      [true, callers.developer.user!.id],
      [true, callers.developer.user!.id],
    ]);
    // A reporter may not resolve (developer_access), the merge request's author may.
    expect((await api.put(`${path}/discussions/${id}`, { resolved: false }, { token: callers.reporter.token })).status).toBe(403);
    const unresolved = await api.put(`${path}/discussions/${id}`, { resolved: false }, { token: author.token });
    expect(unresolved.status).toBe(200);
    expect(unresolved.body.notes.every((n: { resolved: boolean }) => !n.resolved)).toBe(true);

    // A plain note is an individual discussion; a reply makes it a discussion note.
    const note = (await api.post(`${path}/notes`, { body: 'plain' }, { token })).body;
    const list = (await api.get(`${path}/discussions`, { token })).body;
    expect(list.map((d: { individual_note: boolean; notes: unknown[] }) => [d.individual_note, d.notes.length])).toEqual([
      [false, 2],
      [true, 1],
    ]);
    const single = list[1];
    expect(single.notes[0]).toMatchObject({ id: note.id, type: null, resolvable: false });
    expect(single.notes[0]).not.toHaveProperty('resolved');
    expect((await api.post(`${path}/discussions/${single.id}/notes`, { body: 'reply' }, { token })).status).toBe(201);
    const converted = (await api.get(`${path}/discussions/${single.id}`, { token })).body;
    expect(converted).toMatchObject({ id: single.id, individual_note: false, notes: [{ id: note.id, type: 'DiscussionNote', resolvable: true }, { body: 'reply' }] });
  });

  it('edits, resolves and deletes a note of a thread; refuses what GitLab refuses', async () => {
    const iid = await mergeRequest(projects.private, 'Thread notes');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    const token = callers.developer.token;
    const { id, notes } = (await api.post(`${path}/discussions`, { body: 'first' }, { token })).body;
    const noteId = notes[0].id;
    expect((await api.put(`${path}/discussions/${id}/notes/${noteId}`, { body: 'edited' }, { token })).body.body).toBe('edited');
    expect((await api.put(`${path}/discussions/${id}/notes/${noteId}`, { resolved: true }, { token })).body).toMatchObject({ resolved: true });
    expect((await api.put(`${path}/discussions/${id}/notes/${noteId}`, {}, { token })).body).toEqual({ error: 'body, resolved are missing, exactly one parameter must be provided' });
    expect((await api.put(`${path}/discussions/${id}/notes/${noteId}`, { body: 'x', resolved: true }, { token })).body).toEqual({ error: 'body, resolved are mutually exclusive' });
    const plain = (await api.post(`${path}/notes`, { body: 'plain' }, { token })).body;
    const notResolvable = await api.put(`${path}/discussions/${id}/notes/${plain.id}`, { resolved: true }, { token });
    expect(notResolvable.status).toBe(400);
    expect(notResolvable.body).toEqual({ message: '400 Bad request - Note is not resolvable' });
    expect((await api.get(`${path}/discussions/${'0'.repeat(40)}`, { token })).body).toEqual({ message: '404 Discussion Not Found' });
    expect((await api.del(`${path}/discussions/${id}/notes/${noteId}`, { token: callers.reporter.token })).status).toBe(403);
    expect((await api.del(`${path}/discussions/${id}/notes/${noteId}`, { token })).status).toBe(204);
    expect((await api.get(`${path}/discussions/${id}`, { token })).status).toBe(404);
  });

  it('lists system notes as individual discussions that cannot be replied to (400)', async () => {
    const iid = await mergeRequest(projects.private, 'System');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    const token = callers.developer.token;
    await api.put(path, { state_event: 'close' }, { token });
    const [closed] = (await api.get(`${path}/discussions`, { token })).body;
    expect(closed).toEqual({ id: HEX40, individual_note: true, notes: [expect.objectContaining({ body: 'closed', system: true, type: null })] });
    const reply = await api.post(`${path}/discussions/${closed.id}/notes`, { body: 'x' }, { token });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ message: '400 Bad request - Discussion can not be replied to.' });
  });
});

describe('diff notes', () => {
  it("take a position on a line of a version's diff (DiffNote), and refuse one on no line", async () => {
    const iid = await mergeRequest(projects.private, 'Diff');
    const path = `/projects/${projects.private}/merge_requests/${iid}`;
    const token = callers.developer.token;
    const [version] = (await api.get(`${path}/versions`, { token })).body;
    const changes = (await api.get(`${path}/changes`, { token })).body;
    const file = changes.changes[0].new_path as string;
    const refs = { base_sha: version.base_commit_sha, start_sha: version.start_commit_sha, head_sha: version.head_commit_sha };
    const position = { ...refs, position_type: 'text', new_path: file, old_path: file, new_line: 1 };
    const created = await api.post(`${path}/discussions`, { body: 'This line', position }, { token });
    expect(created.status).toBe(201);
    expect(created.body.notes[0]).toMatchObject({
      type: 'DiffNote',
      position: { ...refs, old_path: file, new_path: file, position_type: 'text', old_line: null, new_line: 1 },
      resolvable: true,
    });
    expect(Object.keys(created.body.notes[0].position)).toEqual(['base_sha', 'start_sha', 'head_sha', 'old_path', 'new_path', 'position_type', 'old_line', 'new_line']);
    const reply = await api.post(`${path}/discussions/${created.body.id}/notes`, { body: 'Agreed' }, { token });
    expect(reply.body).toMatchObject({ type: 'DiffNote', position: created.body.notes[0].position });

    const noLine = await api.post(`${path}/discussions`, { body: 'x', position: { ...position, new_line: 99 } }, { token });
    expect(noLine.status).toBe(400);
    expect(noLine.body).toEqual({ message: `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"]}` });
    const otherRefs = await api.post(`${path}/discussions`, { body: 'x', position: { ...position, head_sha: 'f'.repeat(40) } }, { token });
    expect(otherRefs.status).toBe(400);
    const missing = await api.post(`${path}/discussions`, { body: 'x', position: { position_type: 'text' } }, { token });
    expect(missing.body).toEqual({ error: 'position[base_sha] is missing, position[start_sha] is missing, position[head_sha] is missing' });
    expect(createHash('sha1').update(file).digest('hex')).toHaveLength(40);
  });
});

describe('commit discussions and comments', () => {
  it('comments on a commit (Entities::CommitNote) and threads on it', async () => {
    const project = projects.private;
    const token = callers.developer.token;
    const sha = (await api.get(`/projects/${project}/repository/commits/master`, { token })).body.id as string;
    const comment = await api.post(`/projects/${project}/repository/commits/${sha}/comments`, { note: 'Nice commit' }, { token });
    expect(comment.status).toBe(201);
    expect(comment.body).toEqual({ note: 'Nice commit', path: null, line: null, line_type: null, author: expect.objectContaining({ id: callers.developer.user!.id }), created_at: expect.any(String) });
    expect((await api.post(`/projects/${project}/repository/commits/${sha}/comments`, {}, { token })).body).toEqual({ error: 'note is missing' });
    const thread = await api.post(`/projects/${project}/repository/commits/${sha}/discussions`, { body: 'Why this?' }, { token });
    expect(thread.status).toBe(201);
    expect(thread.body.notes[0]).toMatchObject({ type: 'DiscussionNote', noteable_type: 'Commit', noteable_id: null, resolvable: false, noteable_iid: null });
    const list = (await api.get(`/projects/${project}/repository/commits/master/comments`, { token })).body;
    expect(list.map((n: { note: string }) => n.note)).toEqual(['Nice commit', 'Why this?']);
    expect((await api.get(`/projects/${project}/repository/commits/${sha}/discussions`, { token })).body).toHaveLength(2);
    const unknown = await api.get(`/projects/${project}/repository/commits/${'e'.repeat(40)}/comments`, { token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ message: '404 Commit Not Found' });
    // The commits API asks download_code: a guest of a private project may not.
    expect((await api.get(`/projects/${project}/repository/commits/${sha}/comments`, { token: callers.guest.token })).status).toBe(403);
    expect((await api.get(`/projects/${projects.public}/repository/commits/master/comments`, { token: null })).status).toBe(200);
  });

  it("makes a comment on a line of the commit's diff a legacy diff note there (path, line, line_type), on any other line a plain note", async () => {
    const project = projects.private;
    const token = callers.developer.token;
    const commits = `/projects/${project}/repository/commits`;
    const edit = async (action: string, content: string, start = {}) => {
      const res = await api.post(commits, { branch: 'legacy-notes', ...start, commit_message: `${action} f`, actions: [{ action, file_path: 'dir/f.txt', content }] }, { token });
      expect(res.status, res.text).toBe(201);
      return res.body.id as string;
    };
    await edit('create', 'x\na\nb\nc\n', { start_branch: 'master' });
    const sha = await edit('update', 'a\nB\nc\nd\n');
    expect((await api.get(`${commits}/${sha}/diff`, { token })).body.map((d: { diff: string }) => d.diff)).toEqual(['@@ -1,4 +1,4 @@\n-x\n a\n-b\n+B\n c\n+d\n']);
    const url = `${commits}/${sha}/comments`;
    const comment = async (body: Record<string, unknown>) => {
      const res = await api.post(url, { note: 'here', ...body }, { token });
      expect(res.status, res.text).toBe(201);
      return [res.body.path, res.body.line, res.body.line_type];
    };
    expect(await comment({ path: 'dir/f.txt', line: 2, line_type: 'new' })).toEqual(['dir/f.txt', 2, 'new']);
    expect(await comment({ path: 'dir/f.txt', line: 4 })).toEqual(['dir/f.txt', 4, 'new']);
    // A removed line is matched by its new-side position and shown with its old one.
    expect(await comment({ path: 'dir/f.txt', line: 2, line_type: 'old' })).toEqual(['dir/f.txt', 3, 'old']);
    // A context line, a position no line of that type has, another file, a blank path (no line asked): plain notes.
    for (const body of [{ path: 'dir/f.txt', line: 1, line_type: 'new' }, { path: 'dir/f.txt', line: 3, line_type: 'old' }, { path: 'f.txt', line: 2 }, { path: '' }, { line: 'x' }]) {
      expect(await comment(body)).toEqual([null, null, null]);
    }
    expect((await api.post(url, { note: 'x', path: 'dir/f.txt' }, { token })).body).toEqual({ error: 'line is missing' });
    expect((await api.post(url, { path: 'dir/f.txt', line: 'two', line_type: 'both' }, { token })).body).toEqual({
      error: 'note is missing, line is invalid, line_type does not have a valid value',
    });

    const hash = createHash('sha1').update('dir/f.txt').digest('hex');
    const added = (await api.events(`notes-commit-${project}-${sha}`)).filter((e) => e.type === 'NoteAdded').map((e) => [e.data.type, e.data.line_code]);
    expect(added).toEqual([
      ['LegacyDiffNote', `${hash}_4_2`],
      ['LegacyDiffNote', `${hash}_5_4`],
      ['LegacyDiffNote', `${hash}_3_2`],
      ...Array.from({ length: 5 }, () => [null, null]),
    ]);
    const listed = (await api.get(url, { token })).body as { path: string | null; line: number | null; line_type: string | null }[];
    expect(listed.map((n) => [n.path, n.line, n.line_type])).toEqual([
      ['dir/f.txt', 2, 'new'],
      ['dir/f.txt', 4, 'new'],
      ['dir/f.txt', 3, 'old'],
      ...Array.from({ length: 5 }, () => [null, null, null]),
    ]);
    // A legacy diff note is its own discussion, not an individual note; it is never resolvable.
    const discussions = (await api.get(`${commits}/${sha}/discussions`, { token })).body;
    expect(discussions[0]).toMatchObject({ individual_note: false, notes: [{ type: 'LegacyDiffNote', body: 'here', resolvable: false }] });
    expect(discussions[0].notes[0]).not.toHaveProperty('position');
    expect(discussions.map((d: { individual_note: boolean }) => d.individual_note)).toEqual([false, false, false, true, true, true, true, true]);
    // A reply is a legacy diff note on the same line (LegacyDiffDiscussion#reply_attributes).
    const reply = await api.post(`${commits}/${sha}/discussions/${discussions[2].id}/notes`, { body: 'agreed' }, { token });
    expect(reply.status).toBe(201);
    expect(reply.body).toMatchObject({ type: 'LegacyDiffNote', body: 'agreed', resolvable: false });
    expect((await api.events(`notes-commit-${project}-${sha}`)).at(-1)).toMatchObject({ type: 'NoteAdded', data: { type: 'LegacyDiffNote', line_code: `${hash}_3_2`, discussion_id: discussions[2].id } });
    expect((await api.get(url, { token })).body.at(-1)).toMatchObject({ note: 'agreed', path: 'dir/f.txt', line: 3, line_type: 'old' });
  });
});

describe('system notes after a rebuild', () => {
  it('are the same, ids included, after every projection is rebuilt from the log', async () => {
    const iid = await mergeRequest(projects.public, 'Rebuilt');
    const path = `/projects/${projects.public}/merge_requests/${iid}`;
    const token = callers.maintainer.token;
    await api.put(path, { title: 'Rebuilt twice', labels: 'a,b', assignee_ids: [] }, { token });
    await api.post(`${path}/notes`, { body: 'between' }, { token });
    await api.put(path, { state_event: 'close' }, { token });
    const calls = [() => api.get(`${path}/notes`, { token }), () => api.get(`${path}/discussions`, { token }), () => api.get(path, { token })];
    const before = await Promise.all(calls.map(async (call) => (await call()).text));
    expect(JSON.parse(before[0]!).filter((n: { system: boolean }) => n.system)).toHaveLength(4);
    await rebuildProjections(api.handle, PROJECTORS);
    expect(await Promise.all(calls.map(async (call) => (await call()).text))).toEqual(before);
  });
});

type Visibility = 'private' | 'public';
const paths = { private: '', public: '' };

describe('permissions', () => {
  beforeAll(async () => {
    for (const visibility of ['private', 'public'] as const) {
      const iid = await mergeRequest(projects[visibility], `Matrix ${visibility}`);
      paths[visibility] = `/projects/${projects[visibility]}/merge_requests/${iid}/discussions`;
    }
  });

  permissionMatrix<Role, Visibility>(
    {
      'GET /projects/:id/merge_requests/:noteable_id/discussions': {
        private: { anonymous: 401, nonMember: 404, guest: 404, reporter: 200, admin: 200 },
        public: { anonymous: 401, nonMember: 200, guest: 200, external: 200 },
      },
      'POST /projects/:id/merge_requests/:noteable_id/discussions': {
        private: { anonymous: 401, nonMember: 404, guest: 404, reporter: 201, developer: 201, owner: 201, admin: 201 },
        public: { nonMember: 201, guest: 201, external: 201 },
      },
    },
    async ({ endpoint, caller, visibility }) => {
      const token = callers[caller].token;
      const res = endpoint.startsWith('GET') ? await api.get(paths[visibility], { token }) : await api.post(paths[visibility], { body: 'hi' }, { token });
      return res.status;
    },
  );
});
