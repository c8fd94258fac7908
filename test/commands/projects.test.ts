import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAggregate } from '../../src/domain/aggregate.js';
import type { ProjectCommand, ProjectState } from '../../src/domain/projects/decider.js';
import type { ProjectEvent } from '../../src/domain/projects/events.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { describeOnPostgres } from '../support/database.js';
import { createProject } from '../../src/commands/projects.js';
import type { CommandContext } from '../../src/commands/kernel/context.js';
import { run } from '../../src/commands/kernel/run.js';
import { projects } from '../../src/domain/projects/aggregate.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.close());

const metadata = { actor_id: 1, actor_username: 'root' };

describe('the projects aggregate', () => {
  it('appends no event whose payload its schema refuses', async () => {
    const created = await api.post('/projects', { name: 'schema-check' });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    // A decider defect: the starring user's id written as a string.
    const defective = defineAggregate({
      ...projects,
      decider: {
        ...projects.decider,
        decide: (command: ProjectCommand, state: ProjectState) =>
          projects.decider.decide(command, state).map((event) => ({ ...event, data: { ...event.data, user_id: '1' } }) as unknown as ProjectEvent),
      },
    });

    await expect(run({ ctx: api.runtime.app.commands, metadata }, defective, id, { type: 'StarProject', userId: 1 })).rejects.toThrow(/ProjectStarred does not match its schema/);
    expect((await api.events(`project-${id}`)).map((e) => e.type)).toEqual(['ProjectCreated']);
    expect((await api.get(`/projects/${id}`)).body.star_count).toBe(0);
  });
});

describeOnPostgres('creating a project in one round trip', () => {
  /** The command context of the server, its batches counted. */
  function counted() {
    const base = api.runtime.app.commands;
    const sent = { batches: 0 };
    const ctx: CommandContext = { ...base, oneRoundTrip: (statements) => (sent.batches++, base.oneRoundTrip!(statements)) };
    return { w: { ctx, metadata }, sent };
  }
  const root = async () => (await api.handle.db.selectFrom('users').selectAll().where('username', '=', 'root').executeTakeFirstOrThrow());
  const namespace = (id: number) => api.handle.db.selectFrom('namespaces').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  it('sends its claims, its event and every projection at once when the namespace is as read', async () => {
    const group = (await api.post('/groups', { name: 'One Trip', path: 'one-trip', visibility: 'public' })).body;
    const { w, sent } = counted();
    const created = await createProject(w, { settings: { name: 'Quick', path: 'quick', visibility: 'public' }, namespace: await namespace(group.id), creator: await root(), initializeWithReadme: false });
    expect(sent.batches).toBe(1);
    expect(created.version).toBe(1);
    const shown = await api.get(`/projects/${created.state.id}`);
    expect(shown.body).toMatchObject({ path_with_namespace: 'one-trip/quick', visibility: 'public', namespace: { id: group.id } });
    expect((await api.get(`/groups/${group.id}/projects`)).body.map((p: { id: number }) => p.id)).toContain(created.state.id);
    // Its name is claimed like any project's: the same path again is refused.
    const again = await api.post('/projects', { name: 'Quick', path: 'quick', namespace_id: group.id });
    expect(again.status).toBe(400);
  });

  it('decides again in a transaction when the namespace changed after it was read', async () => {
    const group = (await api.post('/groups', { name: 'Changing', path: 'changing', visibility: 'public' })).body;
    const read = await namespace(group.id);
    expect((await api.put(`/groups/${group.id}`, { visibility: 'private' })).status).toBe(200);
    const { w, sent } = counted();
    // Decided on the public namespace it was read as, the project would be public under a private group.
    await expect(createProject(w, { settings: { name: 'Late', path: 'late', visibility: 'public' }, namespace: read, creator: await root(), initializeWithReadme: false })).rejects.toMatchObject({
      code: 'invalid',
    });
    expect(sent.batches).toBe(1);
    expect((await api.get(`/groups/${group.id}/projects`)).body).toEqual([]);
  });
});
