import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * `as_of` (issue 25 §3): answers recorded while a scenario runs equal, afterwards, the same
 * GETs asked `as_of` the log position they were recorded at — authorization as it was included.
 */

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

/** The log's last position, once the workers (async projections, reactors) have caught up. */
async function position(): Promise<string> {
  await api.runtime.worker!.waitUntilCaughtUp({ timeoutMs: 30_000 });
  const { rows } = await sql<{ p: string }>`select max(global_position)::text as p from events`.execute(api.handle.db);
  return rows[0]!.p;
}

const viewSchemas = async () =>
  (await sql<{ name: string }>`select nspname as name from pg_namespace where nspname like 'forgelog_as_of_%'`.execute(api.handle.db)).rows.map((r) => r.name);

describe('GET … ?as_of=<log position>', () => {
  it('answers every GET as the API answered when the log ended there, authorization included', async () => {
    const member = await api.createUser();
    const group = await createGroup(api);
    const project = await createProject(api, { group, initialize_with_readme: true });
    const issue = await api.post(`/projects/${project.id}/issues`, { title: 'First', labels: 'bug' });
    expect(issue.status).toBe(201);

    // The reads to record, as root and as the member (sudo: the member as the log knew them).
    const reads: { path: string; sudo?: string }[] = [
      { path: `/projects/${project.id}` },
      { path: `/projects/${project.id}`, sudo: member.user.username },
      { path: `/projects/${project.id}/issues/${issue.body.iid}` },
      { path: `/projects/${project.id}/issues` },
      { path: `/projects/${project.id}/issues`, sudo: member.user.username },
      { path: `/projects/${project.id}/labels` },
      { path: `/groups/${group.id}/members` },
      { path: `/groups/${group.id}` },
      { path: `/users/${member.user.id}` },
      { path: `/users/${member.user.id}/status` },
      { path: `/projects/${project.id}/events` },
      { path: `/projects?order_by=id&sort=asc` },
      { path: `/projects?order_by=id&sort=asc`, sudo: member.user.username },
      { path: `/projects/${project.id}/issues/${issue.body.iid}/notes` },
      { path: `/projects/${project.id}/milestones` },
      { path: '/user' },
      { path: `/projects/${project.id}/repository/tree` },
      { path: `/projects/${project.id}/repository/commits` },
      { path: `/projects/${project.id}/repository/branches` },
      { path: `/projects/${project.id}/repository/files/README.md?ref=master` },
    ];
    const sudoToken = (await api.post(`/users/1/personal_access_tokens`, { name: 'as-of', scopes: ['api', 'sudo'] })).body.token as string;
    const ask = (read: { path: string; sudo?: string }, asOf?: string) => {
      const [path, search] = read.path.split('?');
      const query: Record<string, string> = Object.fromEntries(new URLSearchParams(search ?? ''));
      if (asOf) query.as_of = asOf;
      return api.get(path!, { token: sudoToken, query, ...(read.sudo ? { headers: { sudo: read.sudo } } : {}) });
    };
    const recorded: { at: string; answers: { status: number; body: unknown }[] }[] = [];
    const record = async () => {
      const at = await position();
      const answers = [];
      for (const read of reads) {
        const res = await ask(read);
        answers.push({ status: res.status, body: res.body });
      }
      recorded.push({ at, answers });
    };

    // 1. The member is not a member yet: the private project is 404 to them.
    await record();
    expect(recorded[0]!.answers[1]!.status).toBe(404);
    // 2. The member joins; the issue is renamed and closed; a second label.
    expect((await api.post(`/groups/${group.id}/members`, { user_id: member.user.id, access_level: 30 })).status).toBe(201);
    expect((await api.put(`/projects/${project.id}/issues/${issue.body.iid}`, { title: 'Renamed', state_event: 'close' })).status).toBe(200);
    expect((await api.post(`/projects/${project.id}/labels`, { name: 'feature', color: '#00ff00' })).status).toBe(201);
    expect((await api.post(`/projects/${project.id}/issues/${issue.body.iid}/notes`, { body: 'A comment' })).status).toBe(201);
    expect((await api.post(`/projects/${project.id}/milestones`, { title: 'v1' })).status).toBe(201);
    // Statuses: a view replays only a stream's last one through its position (Projector.lastWins).
    const setStatus = async (status: object) => expect((await api.put('/user/status', status, { token: member.token })).status).toBe(200);
    for (const message of ['first', 'second', 'third']) await setStatus({ emoji: 'coffee', message });
    // Profile edits: a view replays a run of them as one edit (Projector.mergeRuns).
    const edit = async (changes: object) => expect((await api.put(`/users/${member.user.id}`, changes)).status).toBe(200);
    for (const changes of [{ bio: 'one' }, { location: 'here' }, { bio: 'two' }]) await edit(changes);
    const commit = await api.post(`/projects/${project.id}/repository/commits`, {
      branch: 'master',
      commit_message: 'Second',
      actions: [
        { action: 'update', file_path: 'README.md', content: 'changed' },
        { action: 'create', file_path: 'docs/a.md', content: 'a' },
      ],
    });
    expect(commit.status).toBe(201);
    await record();
    expect(recorded[1]!.answers.map((a) => a.status)).toEqual(reads.map(() => 200));
    // 3. The project is renamed; the member leaves; the issue is deleted.
    expect((await api.put(`/projects/${project.id}`, { name: 'renamed-project', description: 'described now' })).status).toBe(200);
    expect((await api.del(`/groups/${group.id}/members/${member.user.id}`)).status).toBe(204);
    expect((await api.del(`/projects/${project.id}/issues/${issue.body.iid}`)).status).toBe(204);
    await setStatus({ emoji: '', message: '' });
    await setStatus({ emoji: 'tea', message: 'last' });
    for (const changes of [{ bio: 'three' }, { name: 'Renamed member', bio: 'renamed' }, { location: 'there' }]) await edit(changes);
    await record();
    expect(recorded[2]!.answers[2]!.status).toBe(404);
    const statusAt = (i: number) => recorded[i]!.answers[reads.findIndex((r) => r.path.endsWith('/status'))]!.body;
    expect([0, 1, 2].map(statusAt)).toMatchObject([{ message: null }, { emoji: 'coffee', message: 'third' }, { emoji: 'tea', message: 'last' }]);
    const profileAt = (i: number) => recorded[i]!.answers[reads.findIndex((r) => r.path === `/users/${member.user.id}`)]!.body;
    expect([1, 2].map(profileAt)).toMatchObject([{ bio: 'two', location: 'here' }, { name: 'Renamed member', bio: 'renamed', location: 'there' }]);

    for (const { at, answers } of recorded) {
      for (const [i, read] of reads.entries()) {
        const res = await ask(read, at);
        expect({ at, read, status: res.status, body: res.body }).toEqual({ at, read, ...answers[i] });
        if (res.status === 200) expect(res.headers.get('x-forgelog-as-of')).toBe(at);
      }
    }
    // Ordinary reads are today's.
    expect((await ask(reads[0]!)).body).toMatchObject({ name: 'renamed-project', description: 'described now' });
  });

  it('keeps the views of the last positions read, and builds one per position once', async () => {
    await api.createUser();
    const at = await position();
    const before = await viewSchemas();
    const answers = await Promise.all([1, 2, 3].map(() => api.get('/users', { query: { as_of: at } })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    const after = await viewSchemas();
    expect(after.filter((name) => !before.includes(name))).toHaveLength(1);
    expect((await api.get('/users', { query: { as_of: at } })).status).toBe(200);
    expect(await viewSchemas()).toEqual(after);
  });

  it('is for administrators: 401 anonymous, 403 others, 400 a malformed position, 404 one the log does not have', async () => {
    const user = await api.createUser();
    const at = await position();
    expect(await api.get('/projects', { token: null, query: { as_of: at } })).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect(await api.get('/projects', { token: user.token, query: { as_of: at } })).toMatchObject({ status: 403, body: { message: '403 Forbidden - as_of is for administrators' } });
    expect(await api.get('/projects', { token: user.token, query: { as_of: 'x' } })).toMatchObject({ status: 403 });
    for (const bad of ['0', '-1', 'abc', '1.5', '99999999999999999999'])
      expect(await api.get('/projects', { query: { as_of: bad } }), bad).toMatchObject({ status: 400, body: { error: 'as_of is invalid' } });
    expect(await api.get('/projects', { query: { as_of: String(Number(at) + 1_000_000) } })).toMatchObject({ status: 404, body: { message: '404 Log position Not Found' } });
    // A write ignores it, as any parameter its route does not declare.
    const created = await api.post(`/groups?as_of=${at}`, { name: 'as-of-write', path: 'as-of-write' });
    expect(created.status).toBe(201);
    expect(await api.events(`group-${created.body.id}`)).toMatchObject([{ type: 'GroupCreated' }]);
  });
});
