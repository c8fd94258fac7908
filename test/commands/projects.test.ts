import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineAggregate } from '../../src/domain/aggregate.js';
import type { ProjectCommand, ProjectState } from '../../src/domain/projects/decider.js';
import type { ProjectEvent } from '../../src/domain/projects/events.js';
import { startTestServer, type TestServer } from '../support/server.js';
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
