import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyRestrictions } from '../../src/projections/application-settings/queries.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** What other areas take from the application settings, and the paid attributes' licences. */

let api: TestServer;
let starter: TestServer;

beforeAll(async () => {
  [api, starter] = await Promise.all([startTestServer({ plan: 'premium' }), startTestServer({ plan: 'starter' })]);
});
afterAll(async () => {
  await Promise.all([api?.close(), starter?.close()]);
});

const PATH = '/application/settings';
let n = 0;
const unique = (prefix: string) => `${prefix}${++n}x${process.pid}`;

/** Changes a setting for the duration of `run`, then puts the default back. */
async function withSetting(changes: Record<string, unknown>, restore: Record<string, unknown>, run: () => Promise<void>) {
  expect((await api.put(PATH, changes)).status).toBe(200);
  try {
    await run();
  } finally {
    expect((await api.put(PATH, restore)).status).toBe(200);
  }
}

describe('settings other areas read', () => {
  it('restricted_visibility_levels: nobody but an administrator creates or moves a project or group to a restricted level', async () => {
    const alice = await api.createUser();
    const token = alice.token;
    const project = (await api.post('/projects', { name: unique('kept'), visibility: 'internal' }, { token })).body;
    const groupPath = unique('kept');
    const group = (await api.post('/groups', { name: groupPath, path: groupPath, visibility: 'internal' }, { token })).body;
    const refusal = ['Public has been restricted by your GitLab administrator'];
    await withSetting({ restricted_visibility_levels: ['public'] }, { restricted_visibility_levels: [] }, async () => {
      expect(await api.post('/projects', { name: unique('open'), visibility: 'public' }, { token })).toMatchObject({
        status: 400,
        body: { message: { visibility_level: refusal, limit_reached: [] } },
      });
      const path = unique('open');
      expect(await api.post('/groups', { name: path, path, visibility: 'public' }, { token })).toMatchObject({
        status: 400,
        body: { message: 'Failed to save group {:visibility_level=>["Public has been restricted by your GitLab administrator"]}' },
      });
      expect(await api.put(`/projects/${project.id}`, { visibility: 'public' }, { token })).toMatchObject({ status: 400, body: { message: { visibility_level: refusal } } });
      expect(await api.put(`/groups/${group.id}`, { visibility: 'public' }, { token })).toMatchObject({ status: 400, body: { message: { visibility_level: refusal } } });
      // Other levels, and an unchanged one, stay open; an administrator may use any.
      expect((await api.put(`/projects/${project.id}`, { visibility: 'private' }, { token })).status).toBe(200);
      expect((await api.post('/projects', { name: unique('open'), visibility: 'public' })).status).toBe(201);
      expect((await api.put(`/groups/${group.id}`, { visibility: 'public' })).status).toBe(200);
      expect((await api.put(`/groups/${group.id}`, { visibility: 'public', description: 'same level' }, { token })).status).toBe(200);
    });
    expect((await api.get(`/projects/${project.id}`, { token })).body.visibility).toBe('private');
    expect((await api.put(`/projects/${project.id}`, { visibility: 'public' }, { token })).status).toBe(200);
  });


  it('default_projects_limit is the projects_limit of a new user that names none', async () => {
    await withSetting({ default_projects_limit: 42 }, { default_projects_limit: 100000 }, async () => {
      const name = unique('limited');
      const res = await api.post('/users', { email: `${name}@example.com`, username: name, name, password: 'password123' });
      expect(res.status).toBe(201);
      expect(res.body.projects_limit).toBe(42);
      const other = unique('explicit');
      const explicit = await api.post('/users', { email: `${other}@example.com`, username: other, name: other, password: 'password123', projects_limit: 3 });
      expect(explicit.body.projects_limit).toBe(3);
    });
    const name = unique('unlimited');
    expect((await api.post('/users', { email: `${name}@example.com`, username: name, name, password: 'password123' })).body.projects_limit).toBe(100000);
  });

  it('default_project_visibility is the visibility of a new project that names none', async () => {
    await withSetting({ default_project_visibility: 'internal' }, { default_project_visibility: 'private' }, async () => {
      const res = await api.post('/projects', { name: unique('site') });
      expect(res.status).toBe(201);
      expect(res.body.visibility).toBe('internal');
      expect((await api.post('/projects', { name: unique('site'), visibility: 'public' })).body.visibility).toBe('public');
    });
    expect((await api.post('/projects', { name: unique('site') })).body.visibility).toBe('private');
  });

  it('default_group_visibility is the visibility of a new group that names none', async () => {
    await withSetting({ default_group_visibility: 'public' }, { default_group_visibility: 'private' }, async () => {
      const path = unique('team');
      const res = await api.post('/groups', { name: path, path });
      expect(res.status).toBe(201);
      expect(res.body.visibility).toBe('public');
    });
    const path = unique('team');
    expect((await api.post('/groups', { name: path, path })).body.visibility).toBe('private');
  });

  it('key restrictions, per key type, for the keys areas', async () => {
    expect(await keyRestrictions(api.handle.db)).toEqual({ rsa_key_restriction: 0, dsa_key_restriction: 0, ecdsa_key_restriction: 0, ed25519_key_restriction: 0 });
    await withSetting({ rsa_key_restriction: 3072, dsa_key_restriction: -1 }, { rsa_key_restriction: 0, dsa_key_restriction: 0 }, async () => {
      expect(await keyRestrictions(api.handle.db)).toEqual({ rsa_key_restriction: 3072, dsa_key_restriction: -1, ecdsa_key_restriction: 0, ed25519_key_restriction: 0 });
    });
  });
});

describe('paid attributes: shown and taken only under their licence', () => {
  it.each([
    ['elastic_search', 'elasticsearch_search', true],
    ['email_additional_text', 'email_additional_text', 'Legal footer'],
    ['custom_file_templates', 'file_template_project_id', 5],
    ['geo', 'geo_status_timeout', 30],
    ['adjourned_deletion_for_projects_and_groups', 'deletion_adjourned_period', 14],
    ['ldap_group_sync_filter', 'allow_group_owners_to_manage_ldap', false],
    ['check_namespace_plan', 'check_namespace_plan', true],
    ['elastic_search', 'elasticsearch_shards', 3],
    ['default_project_deletion_protection', 'default_project_deletion_protection', true],
  ])('%s: %s', async (_feature, attribute, value) => {
    const premium = await api.put(PATH, { [attribute]: value });
    expect(premium.status).toBe(200);
    expect(premium.body[attribute]).toEqual(value);

    expect((await starter.get(PATH)).body).not.toHaveProperty(attribute);
    const ignored = await starter.put(PATH, { [attribute]: value, sign_in_text: 'taken' });
    expect(ignored.status).toBe(200);
    expect(ignored.body).not.toHaveProperty(attribute);
    const changes = (await starter.events('application-settings')).map((e) => e.data.changes);
    expect(changes.some((c) => attribute in c)).toBe(false);
  });
});
