import { Gitlab, GitbeakerRequestError } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

// @gitbeaker/rest 43.8.0's Integrations call /projects/:id/integrations/:name only.
let api: TestServer;
let gitlab: InstanceType<typeof Gitlab>;

beforeAll(async () => {
  api = await startTestServer();
  gitlab = new Gitlab({ host: api.url, token: api.rootToken, rateLimits: {} });
});
afterAll(() => api.close());

describe('Integrations', () => {
  it('edit, show, all, disable', async () => {
    const project = await createProject(api);
    const edited = await gitlab.Integrations.edit(project.id, 'mattermost', { webhook: 'https://93.184.216.34/hooks/x', channel: 'town-square', pushEvents: false });
    expect(edited).toMatchObject({ slug: 'mattermost', active: true, push_events: false, properties: { webhook: 'https://93.184.216.34/hooks/x', channel: 'town-square' } });
    expect(await gitlab.Integrations.show(project.id, 'mattermost')).toEqual(edited);
    expect((await gitlab.Integrations.all(project.id)).map((i) => i.slug)).toEqual(['mattermost']);
    await gitlab.Integrations.disable(project.id, 'mattermost');
    expect(await gitlab.Integrations.show(project.id, 'mattermost')).toMatchObject({ id: edited.id, active: false, properties: { webhook: null } });
  });

  it('edit refuses a private address with a 400', async () => {
    const project = await createProject(api);
    try {
      await gitlab.Integrations.edit(project.id, 'slack', { webhook: 'http://10.0.0.1/hook' });
      throw new Error('expected a refusal');
    } catch (error) {
      expect(error).toBeInstanceOf(GitbeakerRequestError);
      expect(((error as GitbeakerRequestError).cause as { response: Response }).response.status).toBe(400);
    }
  });
});
