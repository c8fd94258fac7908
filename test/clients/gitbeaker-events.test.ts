import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

// A real GitLab client (@gitbeaker/rest 43.8.0) reading the activity feeds.
let api: TestServer;
let gitlab: InstanceType<typeof Gitlab>;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  gitlab = new Gitlab({ host: api.url, token: api.rootToken, rateLimits: {} });
});
afterAll(() => api.close());

describe('Events', () => {
  it('all({ projectId }) lists the project feed, with filters and pages', async () => {
    const owner = await api.createUser();
    const member = await api.createUser();
    const project = await createProject(api, { token: owner.token, visibility: 'private' });
    await addMember(api, 'projects', project.id, member.user.id, 30);
    const events = await gitlab.Events.all({ projectId: project.id });
    expect(events.map((e) => [e.action_name, e.author_username])).toEqual([
      ['joined', member.user.username],
      ['created', owner.user.username],
    ]);
    expect(events[0]).toMatchObject({ title: null, project_id: project.id, target_type: null, author: { id: member.user.id, username: member.user.username } });
    expect((await gitlab.Events.all({ projectId: project.id, action: 'created' })).map((e) => e.action_name)).toEqual(['created']);
    const { data, paginationInfo } = await gitlab.Events.all({ projectId: project.id, perPage: 1, page: 2, showExpanded: true, pagination: 'offset' });
    expect(data.map((e) => e.action_name)).toEqual(['created']);
    expect(paginationInfo).toMatchObject({ total: 2, totalPages: 2, current: 2, previous: 1, next: null });
  });

  it("all() is the caller's own activity", async () => {
    const user = await api.createUser();
    await createProject(api, { token: user.token });
    const own = new Gitlab({ host: api.url, token: user.token, rateLimits: {} });
    expect((await own.Events.all()).map((e) => e.action_name)).toEqual(['created']);
  });
});
