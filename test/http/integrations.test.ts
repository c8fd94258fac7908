import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_FLAGS, KINDS, type FieldSpec, type KindSpec, isSecretField, shownFields } from '../../src/domain/integrations/catalogue.js';
import { createProject, settled } from '../support/fixtures.js';
import { permissionMatrix, type MatrixTable } from '../support/matrix.js';
import { createCallers, sourceWithRoles, withScopes, type Callers, type Role } from '../support/roles.js';
import { startTestServer, onPlan, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
  await settled(api);
});
afterAll(() => api.close());

const PREFIXES = ['services', 'integrations'] as const;
const path = (projectId: number, slug: string, prefix: (typeof PREFIXES)[number] = 'services') => `/projects/${projectId}/${prefix}/${slug}`;
const streamOf = (projectId: number, slug: string) => `integration-${projectId}-${slug}`;

/** A value each field accepts: a public address for URLs (no DNS here), a distinct word for the others. */
function sample(kind: KindSpec, field: FieldSpec): string | number | boolean {
  if (field.url) return `http://93.184.216.34/${kind.slug}/${field.name}`;
  if (field.values) return 'default';
  if (field.type === 'boolean') return true;
  if (field.type === 'integer') return 1234;
  return `${field.name}-of-${kind.slug}-${Math.random().toString(36).slice(2)}`;
}

const sampleOf = (kind: KindSpec, which: 'required' | 'all') => Object.fromEntries(kind.fields.filter((f) => which === 'all' || f.required).map((f) => [f.name, sample(kind, f)]));

const rawEvents = async (projectId: number) =>
  (await sql<{ text: string }>`select data::text || metadata::text as text from events where project_id = ${projectId}`.execute(api.handle.db)).rows.map((r) => r.text).join('\n');

const BASIC_KEYS = ['id', 'title', 'slug', 'created_at', 'updated_at', 'active', ...EVENT_FLAGS];

describe('every kind of the catalogue', () => {
  let projectId: number;
  beforeAll(async () => {
    projectId = (await createProject(api)).id;
  });

  describe.each(KINDS.map((kind) => [kind.slug, kind] as const))('%s', (slug, kind) => {
    it('names its missing required parameters as Grape does, and writes nothing', async () => {
      const missing = kind.fields.filter((f) => f.required).map((f) => `${f.name} is missing`);
      expect(missing.length).toBeGreaterThan(0);
      expect(await api.put(path(projectId, slug), {})).toMatchObject({ status: 400, body: { error: missing.join(', ') } });
      expect(await api.events(streamOf(projectId, slug))).toEqual([]);
    });

    it('PUT answers the record, GET answers the same under both paths, secrets are in neither nor in the log', async () => {
      const values = sampleOf(kind, 'all');
      const res = await api.put(path(projectId, slug), values);
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual([...BASIC_KEYS, 'properties']);
      expect(res.body).toMatchObject({ id: expect.any(Number), slug, active: true, created_at: expect.any(String) });
      const shown = Object.fromEntries(shownFields(kind).map((f) => [f.name, values[f.name]]));
      expect(res.body.properties).toEqual({ ...(kind.defaults ?? {}), ...shown });
      for (const prefix of PREFIXES) expect(await api.get(path(projectId, slug, prefix))).toMatchObject({ status: 200, body: res.body });

      const log = await rawEvents(projectId);
      const secrets = kind.fields.filter((f) => isSecretField(f.name));
      for (const field of secrets) {
        expect(log).not.toContain(String(values[field.name]));
        if (field.name !== 'webhook') expect(res.body.properties).not.toHaveProperty(field.name);
      }
      const [saved] = await api.events(streamOf(projectId, slug));
      expect(saved).toMatchObject({ type: 'IntegrationSaved', data: { id: res.body.id, project_id: projectId, kind: slug } });
      expect(Object.keys(saved!.data.secrets).sort()).toEqual(secrets.map((f) => f.name).sort());
    });

    it('DELETE answers 204; GET then shows it inactive with every property nil', async () => {
      const { body: before } = await api.get(path(projectId, slug));
      expect((await api.del(path(projectId, slug, 'integrations'))).status).toBe(204);
      const res = await api.get(path(projectId, slug));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: before.id, active: false });
      expect(res.body.properties).toEqual(Object.fromEntries(shownFields(kind).map((f) => [f.name, null])));
      const secrets = await sql<{ n: string }>`select count(*) as n from integration_secrets where project_id = ${projectId} and kind = ${slug}`.execute(api.handle.db);
      expect(Number(secrets.rows[0]!.n)).toBe(0);
    });
  });
});

describe('GET /projects/:id/services/:slug', () => {
  it('answers a kind never set as GitLab builds it: no id, inactive, every flag true, its initial properties', async () => {
    const project = await createProject(api);
    for (const prefix of PREFIXES) {
      const res = await api.get(path(project.id, 'slack', prefix));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        id: null,
        title: 'Slack notifications',
        slug: 'slack',
        created_at: null,
        updated_at: null,
        active: false,
        ...Object.fromEntries(EVENT_FLAGS.map((f) => [f, true])),
        properties: { notify_only_broken_pipelines: true, branches_to_be_notified: 'all' },
      });
    }
    expect((await api.get(path(project.id, 'asana'))).body.properties).toEqual({});
  });

  it('answers an unknown slug with a parameter error; a PUT to one matches no route', async () => {
    const project = await createProject(api);
    expect(await api.get(path(project.id, 'nope'))).toMatchObject({ status: 400, body: { error: 'service_slug does not have a valid value' } });
    expect(await api.get(path(project.id, 'nope', 'integrations'))).toMatchObject({ status: 400, body: { error: 'slug does not have a valid value' } });
    expect(await api.del(path(project.id, 'nope'))).toMatchObject({ status: 400, body: { error: 'service_slug does not have a valid value' } });
    expect(await api.put(path(project.id, 'nope'), { token: 'x' })).toMatchObject({ status: 404, body: { error: '404 Not Found' } });
    expect(await api.get(path(999999, 'nope'))).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
  });
});

describe('PUT /projects/:id/services/:slug', () => {
  it('changes only what is sent, keeps its id, and appends nothing when nothing changes', async () => {
    const project = await createProject(api);
    const first = await api.put(path(project.id, 'slack'), { webhook: 'https://93.184.216.34/hook', channel: 'general', push_events: false });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ active: true, push_events: false, issues_events: true, properties: { webhook: 'https://93.184.216.34/hook', channel: 'general', notify_only_broken_pipelines: true, branches_to_be_notified: 'all' } });
    const second = await api.put(path(project.id, 'slack', 'integrations'), { webhook: 'https://93.184.216.34/hook', username: 'bot', note_events: 'false' });
    expect(second.body).toMatchObject({ id: first.body.id, push_events: false, note_events: false, properties: { channel: 'general', username: 'bot' } });
    expect((await api.put(path(project.id, 'slack'), { webhook: 'https://93.184.216.34/hook', username: 'bot' })).status).toBe(200);
    expect((await api.events(streamOf(project.id, 'slack'))).map((e) => e.type)).toEqual(['IntegrationSaved', 'IntegrationSaved']);
    // A new secret is a change: its fingerprint differs.
    expect((await api.put(path(project.id, 'slack'), { webhook: 'https://93.184.216.34/other' })).body.properties.webhook).toBe('https://93.184.216.34/other');
    const events = await api.events(streamOf(project.id, 'slack'));
    expect(events).toHaveLength(3);
    expect(events[2]!.data.secrets.webhook).not.toBe(events[1]!.data.secrets.webhook);
    expect(events[2]!.data.secrets.webhook).toMatch(/^[0-9a-f]{32}$/);
  });

  it('takes the deprecated aliases: notify_only_default_branch and the misspelt confidental_note_events', async () => {
    const project = await createProject(api);
    const teams = await api.put(path(project.id, 'microsoft-teams'), { webhook: 'https://93.184.216.34/t', notify_only_default_branch: true, confidental_note_events: false });
    expect(teams.body).toMatchObject({ confidential_note_events: false, properties: { branches_to_be_notified: 'default' } });
    const both = await api.put(path(project.id, 'mattermost'), { webhook: 'https://93.184.216.34/m', notify_only_default_branch: true, branches_to_be_notified: 'protected' });
    expect(both.body.properties.branches_to_be_notified).toBe('protected');
    const hipchat = await api.put(path(project.id, 'hipchat'), { token: 't0k', confidental_note_events: 'maybe' });
    expect(hipchat).toMatchObject({ status: 400, body: { error: 'confidental_note_events is invalid' } });
  });

  it("validates as GitLab's models do: blank required fields, URLs, branch choices — 400 and nothing written", async () => {
    const project = await createProject(api);
    expect(await api.put(path(project.id, 'slack'), { webhook: '' })).toMatchObject({ status: 400, body: { message: { webhook: ["can't be blank", 'must be a valid URL'] } } });
    expect(await api.put(path(project.id, 'slack'), { webhook: 'ftp://93.184.216.34/' })).toMatchObject({ status: 400, body: { message: { webhook: ['is blocked: Only allowed schemes are http, https'] } } });
    expect(await api.put(path(project.id, 'slack'), { webhook: 'not a url' })).toMatchObject({ status: 400, body: { message: { webhook: ['is blocked: URI is invalid'] } } });
    expect(await api.put(path(project.id, 'slack'), { webhook: 'https://93.184.216.34/', branches_to_be_notified: 'some' })).toMatchObject({
      status: 400,
      body: { message: { branches_to_be_notified: ['is not included in the list'] } },
    });
    expect(await api.put(path(project.id, 'jira'), { url: 'https://93.184.216.34', username: 'u', password: '' })).toMatchObject({ status: 400, body: { message: { password: ["can't be blank"] } } });
    expect(await api.put(path(project.id, 'irker'), { recipients: 'a', server_port: 'port' })).toMatchObject({ status: 400, body: { error: 'server_port is invalid' } });
    expect(await api.put(path(project.id, 'slack'), { webhook: 'https://93.184.216.34/', push_events: 'maybe' })).toMatchObject({ status: 400, body: { error: 'push_events is invalid' } });
    expect(await api.events(streamOf(project.id, 'slack'))).toEqual([]);
    expect(await api.events(streamOf(project.id, 'jira'))).toEqual([]);
    const secrets = await sql<{ n: string }>`select count(*) as n from integration_secrets where project_id = ${project.id}`.execute(api.handle.db);
    expect(Number(secrets.rows[0]!.n)).toBe(0);
  });

  it('shows a title the issue tracker was given, and never its description', async () => {
    const project = await createProject(api);
    const res = await api.put(path(project.id, 'custom-issue-tracker'), {
      new_issue_url: 'https://93.184.216.34/new',
      issues_url: 'https://93.184.216.34/:id',
      project_url: 'https://93.184.216.34/',
      title: 'Our tracker',
      description: 'secret-ish',
    });
    expect(res.body.title).toBe('Our tracker');
    expect(res.body.properties).toEqual({ new_issue_url: 'https://93.184.216.34/new', issues_url: 'https://93.184.216.34/:id', project_url: 'https://93.184.216.34/' });
  });
});

describe('the SSRF guard', () => {
  const REFUSED: [string, string][] = [
    ['http://127.0.0.1/hook', 'Requests to localhost are not allowed'],
    ['http://localhost:8080/hook', 'Requests to localhost are not allowed'],
    ['http://[::1]/hook', 'Requests to localhost are not allowed'],
    ['http://0.0.0.0/hook', 'Requests to localhost are not allowed'],
    ['http://127.1.2.3/hook', 'Requests to loopback addresses are not allowed'],
    ['http://[::ffff:127.9.9.9]/hook', 'Requests to loopback addresses are not allowed'],
    ['http://10.1.2.3/hook', 'Requests to the local network are not allowed'],
    ['http://172.20.0.1/hook', 'Requests to the local network are not allowed'],
    ['http://192.168.0.10/hook', 'Requests to the local network are not allowed'],
    ['http://[fd00::1]/hook', 'Requests to the local network are not allowed'],
    ['http://[::ffff:10.0.0.1]/hook', 'Requests to the local network are not allowed'],
    ['http://169.254.169.254/latest/meta-data', 'Requests to the link local network are not allowed'],
    ['http://[fe80::1]/hook', 'Requests to the link local network are not allowed'],
    // IPv6 forms that embed an IPv4 address are refused for the address they embed (url-blocker.ts).
    ['http://[::127.0.0.1]/h', 'Requests to localhost are not allowed'],
    ['http://[::127.0.0.2]/h', 'Requests to loopback addresses are not allowed'],
    ['http://[64:ff9b::7f00:1]/h', 'Requests to localhost are not allowed'],
    ['http://[64:ff9b::10.1.2.3]/h', 'Requests to the local network are not allowed'],
    ['http://[64:ff9b::a9fe:a9fe]/h', 'Requests to the link local network are not allowed'],
    ['http://[64:ff9b:1::5db8:d822]/h', 'Requests to the local network are not allowed'],
    ['http://[::ffff:0:127.0.0.3]/h', 'Requests to loopback addresses are not allowed'],
    ['http://[2002:c0a8:1::1]/h', 'Requests to the local network are not allowed'],
    ['http://[2002:7f00:1::1]/h', 'Requests to localhost are not allowed'],
    ['http://[2001:0:5db8:d822:0:0:f5ff:fffe]/h', 'Requests to the local network are not allowed'],
    ['http://[2001:0:a9fe:a9fe:0:0:a247:27dd]/h', 'Requests to the link local network are not allowed'],
  ];

  it.each(REFUSED)('refuses %s by default: %s', async (url, reason) => {
    const project = await createProject(api);
    expect(await api.put(path(project.id, 'slack'), { webhook: url })).toMatchObject({ status: 400, body: { message: { webhook: [`is blocked: ${reason}`] } } });
    expect(await api.events(streamOf(project.id, 'slack'))).toEqual([]);
  });

  it('takes public IPv4 addresses embedded in NAT64, 6to4 and Teredo addresses', async () => {
    const project = await createProject(api);
    for (const webhook of ['http://[64:ff9b::5db8:d822]/h', 'http://[2002:5db8:d822::1]/h', 'http://[2001:0:5db8:d822:0:0:a247:27dd]/h', 'http://[2606:2800:220:1::1]/h']) {
      expect(await api.put(path(project.id, 'slack'), { webhook })).toMatchObject({ status: 200, body: { properties: { webhook } } });
    }
  });

  it('guards every URL field (Jira api_url, Prometheus, Drone…), and takes local addresses once the instance allows them', async () => {
    const project = await createProject(api);
    expect(await api.put(path(project.id, 'jira'), { url: 'https://93.184.216.34', api_url: 'http://192.168.1.1', username: 'u', password: 'p' })).toMatchObject({
      status: 400,
      body: { message: { api_url: ['is blocked: Requests to the local network are not allowed'] } },
    });
    expect((await api.put(path(project.id, 'prometheus'), { api_url: 'http://127.0.0.1:9090/' })).status).toBe(400);
    try {
      expect((await api.put('/application/settings', { allow_local_requests_from_web_hooks_and_services: true })).status).toBe(200);
      const res = await api.put(path(project.id, 'slack'), { webhook: 'http://127.0.0.1/hook' });
      expect(res).toMatchObject({ status: 200, body: { active: true, properties: { webhook: 'http://127.0.0.1/hook' } } });
      expect((await api.put(path(project.id, 'prometheus'), { api_url: 'http://127.0.0.1:9090/' })).status).toBe(200);
      // The scheme is still checked.
      expect((await api.put(path(project.id, 'slack'), { webhook: 'gopher://127.0.0.1/' })).status).toBe(400);
    } finally {
      expect((await api.put('/application/settings', { allow_local_requests_from_web_hooks_and_services: false })).status).toBe(200);
    }
  });
});

describe('GET /projects/:id/services', () => {
  it('lists the active ones by id, without properties, under both paths', async () => {
    const project = await createProject(api);
    expect((await api.get(`/projects/${project.id}/services`)).body).toEqual([]);
    const asana = (await api.put(path(project.id, 'asana'), { api_key: 'k' })).body;
    const slack = (await api.put(path(project.id, 'slack'), { webhook: 'https://93.184.216.34/' })).body;
    expect((await api.put(path(project.id, 'flowdock'), { token: 't' })).status).toBe(200);
    expect((await api.del(path(project.id, 'flowdock'))).status).toBe(204);
    const { properties: _a, ...asanaBasic } = asana;
    const { properties: _s, ...slackBasic } = slack;
    for (const prefix of PREFIXES) {
      const res = await api.get(`/projects/${project.id}/${prefix}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual([asanaBasic, slackBasic]);
    }
  });
});

describe('licensed kinds', () => {
  it('serves github on premium only, jenkins from starter; elsewhere they are kinds GitLab CE has no route for', async () => {
    const project = await createProject(api);
    const github = { token: 'gh-token', repository_url: 'https://93.184.216.34/o/r' };
    await onPlan(api, 'starter', async () => {
      expect(await api.put(path(project.id, 'github'), github)).toMatchObject({ status: 404, body: { error: '404 Not Found' } });
      expect((await api.get(path(project.id, 'github'))).status).toBe(400);
      expect((await api.put(path(project.id, 'jenkins'), { jenkins_url: 'https://93.184.216.34', project_name: 'p' })).status).toBe(200);
    });
    await onPlan(api, 'free', async () => {
      expect((await api.put(path(project.id, 'jenkins'), { jenkins_url: 'https://93.184.216.34', project_name: 'p' })).status).toBe(404);
      expect((await api.get(`/projects/${project.id}/services`)).body).toEqual([]);
    });
    await onPlan(api, 'premium', async () => {
      expect(await api.put(path(project.id, 'github'), github)).toMatchObject({ status: 200, body: { slug: 'github', properties: { repository_url: github.repository_url } } });
    });
  });
});

describe('a deleted project', () => {
  it('takes its integrations and their secrets with it', async () => {
    const project = await createProject(api);
    expect((await api.put(path(project.id, 'slack'), { webhook: 'https://93.184.216.34/' })).status).toBe(200);
    expect((await api.del(`/projects/${project.id}`)).status).toBe(202);
    const count = async () =>
      Number(
        (await sql<{ n: string }>`select (select count(*) from integrations where project_id = ${project.id}) + (select count(*) from integration_secrets where project_id = ${project.id}) as n`.execute(api.handle.db)).rows[0]!.n,
      );
    for (let i = 0; i < 200 && (await count()) > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await count()).toBe(0);
  });
});

describe('permissions', () => {
  type Visibility = 'private' | 'internal' | 'public';

  // `before { authenticate! }` then `authorize_admin_project`: maintainers and owners; another's private project is 404.
  const ROW = { anonymous: 401, nonMember: 404, guest: 403, reporter: 403, developer: 403, maintainer: 200, owner: 200, admin: 200, blocked: 403, external: 404 };
  const VISIBLE = { ...ROW, nonMember: 403, external: 403 };
  const rows = (ok: number): MatrixTable<Role, Visibility>[string] => ({
    private: { ...ROW, maintainer: ok, owner: ok, admin: ok },
    internal: { ...VISIBLE, external: 404, maintainer: ok, owner: ok, admin: ok },
    public: { ...VISIBLE, maintainer: ok, owner: ok, admin: ok },
  });
  const MATRIX: MatrixTable<Role, Visibility> = {
    'GET /projects/:id/services': rows(200),
    'GET /projects/:id/integrations': rows(200),
    'GET /projects/:id/services/slack': rows(200),
    'PUT /projects/:id/services/slack': rows(200),
    'PUT /projects/:id/integrations/slack': rows(200),
    'DELETE /projects/:id/services/slack': rows(204),
    'DELETE /projects/:id/integrations/slack': rows(204),
  };

  let callers: Callers;
  const projects = new Map<Visibility, number>();
  beforeAll(async () => {
    callers = await createCallers(api);
    for (const visibility of ['private', 'internal', 'public'] as const) projects.set(visibility, await sourceWithRoles(api, callers, 'projects', visibility));
  });

  permissionMatrix(MATRIX, async ({ endpoint, caller, visibility }) => {
    const [method, path] = endpoint.split(' ') as [string, string];
    const url = path.replace(':id', String(projects.get(visibility)!));
    const body = method === 'PUT' ? { webhook: 'https://93.184.216.34/hook' } : undefined;
    const res = await api.request(method, url, { token: callers[caller].token, ...(body ? { body } : {}) });
    if (res.status === 404) expect(res.body).toEqual({ message: '404 Project Not Found' });
    return res.status;
  });

  it('needs the api scope: read_api or read_user tokens are refused', async () => {
    const projectId = projects.get('private')!;
    const reader = await withScopes(api, callers.maintainer, ['read_user']);
    expect((await api.get(`/projects/${projectId}/services/slack`, { token: reader.token })).status).toBe(403);
    expect((await api.put(`/projects/${projectId}/services/slack`, { webhook: 'https://93.184.216.34/' }, { token: reader.token })).status).toBe(403);
  });

  it('answers the project before the parameters: 404 and 403 come first', async () => {
    const projectId = projects.get('private')!;
    expect((await api.put(`/projects/${projectId}/services/slack`, {}, { token: callers.nonMember.token })).status).toBe(404);
    expect((await api.put(`/projects/${projectId}/services/slack`, {}, { token: callers.developer.token })).status).toBe(403);
    expect(await api.put(`/projects/${projectId}/services/slack`, {}, { token: callers.maintainer.token })).toMatchObject({ status: 400, body: { error: 'webhook is missing' } });
  });
});

describe('hostile input', () => {
  it('answers 4xx in GitLab form, never 500', async () => {
    const project = (await api.post('/projects', { name: 'hostile', path: `hostile${process.pid}` })).body;
    const put = (slug: string, body: unknown) => api.put(`/projects/${project.id}/services/${slug}`, body);
    expect(await put('slack', { webhook: ['https://93.184.216.34/'] })).toMatchObject({ status: 400, body: { error: 'webhook is invalid' } });
    expect(await put('slack', { webhook: { a: 1 } })).toMatchObject({ status: 400, body: { error: 'webhook is invalid' } });
    expect(await put('irker', { recipients: 'a', server_port: 2 ** 40 })).toMatchObject({ status: 400, body: { error: 'server_port is invalid' } });
    expect((await put('slack', { webhook: `https://93.184.216.34/${'a'.repeat(100_000)}` })).status).toBe(200);
    expect((await put('slack', { webhook: 'http://[::1' })).status).toBe(400);
    expect((await put('slack', { webhook: 'http://%0a127.0.0.1/' })).status).toBe(400);
    expect((await put('slack', { webhook: 'http://-bad-/' })).body).toEqual({ message: { webhook: ['is blocked: Hostname or IP address invalid'] } });
    expect((await put('slack', { webhook: 'http://2130706433/' })).body).toEqual({ message: { webhook: ['is blocked: Requests to localhost are not allowed'] } });
    expect((await api.get(`/projects/${project.id}/services/..%2Fslack`)).status).toBe(400);
    expect((await api.put(`/projects/${project.id}/services/${'x'.repeat(5000)}`, {})).status).toBe(404);
    expect((await api.get(`/projects/not%2Fthere/services/slack`)).status).toBe(404);
  });
});
