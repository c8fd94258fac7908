import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';

// A real GitLab client (@gitbeaker/rest 43.8.0) on feature flags. python-gitlab 3.12 has no
// feature flag API.
let api: TestServer;
let gitlab: InstanceType<typeof Gitlab>;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
  gitlab = new Gitlab({ host: api.url, token: api.rootToken, rateLimits: {} });
});
afterAll(() => api.close());

describe('FeatureFlags', () => {
  it('create, all, show, edit and remove work unchanged', async () => {
    const project = await createProject(api);
    // gitbeaker sends `version`, which GitLab 12 did not declare and ignores.
    const created = await gitlab.FeatureFlags.create(project.id, 'new-checkout', 'legacy_flag', { description: 'the new checkout' });
    expect(created).toMatchObject({ name: 'new-checkout', description: 'the new checkout', scopes: [{ environment_scope: '*', active: true, strategies: [{ name: 'default', parameters: {} }] }] });
    await gitlab.FeatureFlags.create(project.id, 'another', 'legacy_flag');
    expect((await gitlab.FeatureFlags.all(project.id)).map((f) => f.name)).toEqual(['another', 'new-checkout']);
    expect((await gitlab.FeatureFlags.all(project.id, { scope: 'disabled' })).map((f) => f.name)).toEqual([]);
    expect(await gitlab.FeatureFlags.show(project.id, 'new-checkout')).toEqual(created);
    const edited = await gitlab.FeatureFlags.edit(project.id, 'new-checkout', { description: 'changed', active: false });
    expect(edited).toMatchObject({ name: 'new-checkout', description: 'changed', scopes: [{ environment_scope: '*', active: false }] });
    await gitlab.FeatureFlags.remove(project.id, 'another');
    expect((await gitlab.FeatureFlags.all(project.id)).map((f) => f.name)).toEqual(['new-checkout']);
    await expect(gitlab.FeatureFlags.show(project.id, 'another')).rejects.toThrow();
  });
});
