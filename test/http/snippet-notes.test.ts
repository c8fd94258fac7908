import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Visibility } from '../../src/domain/access.js';
import { addMember, createGroup, createProject, settled } from '../support/fixtures.js';
import { permissionMatrix } from '../support/matrix.js';
import { createCallers, grantRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  callers = await createCallers(api);
});
afterAll(() => api.close());

const token = (role: Role) => callers[role].token;

async function projectWithRoles(visibility: Visibility) {
  const group = await createGroup(api, { token: token('owner')!, visibility });
  const project = await createProject(api, { token: token('owner')!, group, visibility });
  await grantRoles(api, callers, { projects: project.id });
  return project.id;
}

/** A snippet of the project by `role`; its path. */
async function snippet(projectId: number, visibility: Visibility, role: Role = 'developer') {
  const res = await api.post(`/projects/${projectId}/snippets`, { title: 'Snip', file_name: 'a.rb', content: 'puts 1', visibility }, { token: token(role) });
  expect(res.status, res.text).toBe(201);
  return `/projects/${projectId}/snippets/${res.body.id}`;
}

describe('notes, discussions and award emoji on /projects/:id/snippets/:snippet_id', () => {
  it('comments (201), threads, replies, awards the snippet and a note; deleting the snippet forgets them', async () => {
    const projectId = await projectWithRoles('private');
    const path = await snippet(projectId, 'private');
    const snippetId = Number(path.slice(path.lastIndexOf('/') + 1));
    const note = await api.post(`${path}/notes`, { body: 'Nice snippet' }, { token: token('reporter') });
    expect(note.status).toBe(201);
    expect(note.body).toMatchObject({ body: 'Nice snippet', system: false, noteable_id: snippetId, noteable_type: 'Snippet', noteable_iid: null, author: { id: callers.reporter.user!.id } });
    const thread = await api.post(`${path}/discussions`, { body: 'Why?' }, { token: token('guest') });
    expect(thread.status).toBe(201);
    const reply = await api.post(`${path}/discussions/${thread.body.id}/notes`, { body: 'Because' }, { token: token('developer') });
    expect(reply.status).toBe(201);
    expect((await api.get(`${path}/notes`, { token: token('guest'), query: { sort: 'asc' } })).body.map((n: { body: string }) => n.body)).toEqual(['Nice snippet', 'Why?', 'Because']);
    expect((await api.get(`${path}/discussions`, { token: token('guest') })).body).toHaveLength(2);

    const award = await api.post(`${path}/award_emoji`, { name: 'thumbsup' }, { token: token('guest') });
    expect(award.status).toBe(201);
    expect(award.body).toMatchObject({ name: 'thumbsup', awardable_id: snippetId, awardable_type: 'Snippet' });
    const onNote = await api.post(`${path}/notes/${note.body.id}/award_emoji`, { name: 'heart' }, { token: token('developer') });
    expect(onNote.body).toMatchObject({ name: 'heart', awardable_id: note.body.id, awardable_type: 'Note' });
    expect((await api.get(`${path}/award_emoji`, { token: token('reporter') })).body).toEqual([award.body]);

    // A note's author or a maintainer edits it.
    expect((await api.put(`${path}/notes/${note.body.id}`, { body: 'edited' }, { token: token('developer') })).status).toBe(403);
    expect((await api.put(`${path}/notes/${note.body.id}`, { body: 'edited' }, { token: token('maintainer') })).body.body).toBe('edited');

    expect((await api.del(path, { token: token('developer') })).status).toBe(204);
    const rows = (table: 'notes' | 'award_emoji') => api.handle.db.selectFrom(table).selectAll().where('project_id', '=', projectId).execute();
    expect(await rows('notes')).toEqual([]);
    // The snippet's awards go with it, and the awards on its notes with them (GitLab: notes and awards `dependent: :destroy`).
    expect(await rows('award_emoji')).toEqual([]);
    expect((await api.get(`${path}/notes`, { token: token('developer') })).body).toEqual({ message: '404 Not found' });
  });

  it("404s someone else's private snippet and a snippet of another project", async () => {
    const projectId = await projectWithRoles('public');
    const other = await projectWithRoles('public');
    const path = await snippet(projectId, 'private', 'maintainer');
    expect((await api.get(`${path}/notes`, { token: token('nonMember') })).status).toBe(404);
    const elsewhere = path.replace(`/projects/${projectId}/`, `/projects/${other}/`);
    expect((await api.post(`${elsewhere}/notes`, { body: 'x' }, { token: token('maintainer') })).body).toEqual({ message: '404 Not found' });
    expect((await api.post(`${elsewhere}/award_emoji`, { name: 'tada' }, { token: token('maintainer') })).status).toBe(404);
  });
});

describe('a deleted user', () => {
  it('takes the project snippets they wrote along, with the notes on them and the awards on both', async () => {
    const projectId = await projectWithRoles('public');
    const writer = await api.createUser({ username: 'snippet-notes-writer' });
    await addMember(api, 'projects', projectId, writer.user.id, 30);
    const res = await api.post(`/projects/${projectId}/snippets`, { title: 'Gone', file_name: 'a.rb', content: 'puts 1', visibility: 'public' }, { token: writer.token });
    expect(res.status, res.text).toBe(201);
    const path = `/projects/${projectId}/snippets/${res.body.id}`;
    const kept = await snippet(projectId, 'public');
    for (const on of [path, kept]) {
      const note = (await api.post(`${on}/notes`, { body: 'Awarded' }, { token: token('reporter') })).body;
      expect((await api.post(`${on}/notes/${note.id}/award_emoji`, { name: 'heart' }, { token: token('guest') })).status).toBe(201);
      expect((await api.post(`${on}/award_emoji`, { name: 'tada' }, { token: token('guest') })).status).toBe(201);
    }
    const rows = async (table: 'notes' | 'award_emoji') => (await api.handle.db.selectFrom(table).select('id').where('project_id', '=', projectId).execute()).length;
    expect([await rows('notes'), await rows('award_emoji')]).toEqual([2, 4]);

    expect((await api.del(`/users/${writer.user.id}`)).status).toBe(204);
    expect([await rows('notes'), await rows('award_emoji')]).toEqual([1, 2]);
    expect(await api.handle.db.selectFrom('note_counts').select('noteable_id').where('noteable_type', '=', 'Snippet').where('noteable_id', '=', res.body.id).execute()).toEqual([]);
    expect((await api.get(`${kept}/notes`, { token: token('guest') })).body).toHaveLength(1);
    expect((await api.get(`${kept}/award_emoji`, { token: token('guest') })).body).toHaveLength(1);
  });
});

type ProjectVisibility = 'private' | 'public';
const paths: Record<ProjectVisibility, string> = { private: '', public: '' };

describe('permissions on a public snippet', () => {
  beforeAll(async () => {
    for (const visibility of ['private', 'public'] as const) paths[visibility] = await snippet(await projectWithRoles(visibility), 'public');
  });

  permissionMatrix<Role, ProjectVisibility>(
    {
      'GET /projects/:id/snippets/:noteable_id/notes': {
        private: { anonymous: 401, nonMember: 404, guest: 200, reporter: 200, developer: 200, maintainer: 200, owner: 200, admin: 200 },
        public: { anonymous: 401, nonMember: 200, guest: 200, external: 200, admin: 200 },
      },
      'POST /projects/:id/snippets/:noteable_id/notes': {
        private: { anonymous: 401, nonMember: 404, guest: 201, reporter: 201, developer: 201, owner: 201, admin: 201 },
        public: { nonMember: 201, guest: 201, external: 201 },
      },
      'POST /projects/:id/snippets/:snippet_id/award_emoji': {
        private: { anonymous: 401, nonMember: 404, guest: 201, maintainer: 201, admin: 201 },
        public: { nonMember: 201, developer: 201 },
      },
    },
    async ({ endpoint, caller, visibility }) => {
      const t = token(caller);
      const path = paths[visibility];
      if (endpoint.startsWith('GET')) return (await api.get(`${path}/notes`, { token: t })).status;
      if (endpoint.endsWith('notes')) return (await api.post(`${path}/notes`, { body: 'hi' }, { token: t })).status;
      return (await api.post(`${path}/award_emoji`, { name: 'thumbsup' }, { token: t })).status;
    },
  );
});
