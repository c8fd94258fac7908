import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type GeoConfig } from '../../src/config.js';
import { geoAuthorization } from '../../src/geo/keys.js';
import { geoNodesProjector } from '../../src/projections/geo-nodes/projector.js';
import { waitUntilReadable } from '../eventstore/audit-support.js';
import { createProject } from '../support/fixtures.js';
import { permissionMatrix } from '../support/matrix.js';
import { expectReplayEquivalence } from '../support/replay.js';
import { createCallers, type Callers, type Role } from '../support/roles.js';
import { onPlan, startTestServer, type TestServer } from '../support/server.js';

const SECRET = 'geo-secret-for-tests-0123456789abcdef';
const PRIMARY = 'primary-node';
export const geoConfig = (overrides: Partial<GeoConfig> = {}): GeoConfig => ({
  ...loadConfig({}).geo,
  nodeName: PRIMARY,
  secret: SECRET,
  pollIntervalMs: 20,
  statusIntervalMs: 50,
  ...overrides,
});

let api: TestServer;
let callers: Callers;
let primary: any;

beforeAll(async () => {
  api = await startTestServer({ geo: geoConfig() });
  callers = await createCallers(api);
  primary = (await api.post('/geo_nodes', { name: PRIMARY, url: 'https://primary.example.com', primary: true })).body;
});
afterAll(() => api.close());

const NODE_KEYS = [
  'id',
  'name',
  'url',
  'internal_url',
  'primary',
  'enabled',
  'current',
  'files_max_capacity',
  'repos_max_capacity',
  'verification_max_capacity',
  'container_repositories_max_capacity',
  'clone_protocol',
  'web_edit_url',
  '_links',
];
const SECONDARY_KEYS = [...NODE_KEYS.slice(0, 11), 'sync_object_storage', 'clone_protocol', 'web_edit_url', 'web_geo_projects_url', '_links'];
const NOT_FOUND = { message: '404 Not found' };

let counter = 0;
async function createSecondary(body: Record<string, unknown> = {}) {
  const res = await api.post('/geo_nodes', { name: `secondary-${++counter}`, url: `https://secondary-${counter}.example.com`, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

/** Every field of SPEC.md's Geo node status record. */
const SPEC_STATUS_FIELDS = [
  'geo_node_id',
  'healthy',
  'health',
  'health_status',
  'missing_oauth_application',
  'db_replication_lag_seconds',
  'projects_count',
  'version',
  'revision',
  'last_event_id',
  'last_event_timestamp',
  'cursor_last_event_id',
  'cursor_last_event_timestamp',
  'last_successful_status_check_timestamp',
  ...['attachments', 'lfs_objects', 'job_artifacts', 'container_repositories', 'design_repositories'].flatMap((x) => [`${x}_count`, `${x}_synced_count`, `${x}_failed_count`, `${x}_synced_in_percentage`]),
  ...['repositories', 'wikis'].flatMap((x) => [`${x}_synced_count`, `${x}_failed_count`, `${x}_synced_in_percentage`]),
  'replication_slots_count',
  'replication_slots_used_count',
  'replication_slots_used_in_percentage',
  'replication_slots_max_retained_wal_bytes',
  ...['repositories', 'wikis'].flatMap((x) => [
    `${x}_checksummed_count`,
    `${x}_checksum_failed_count`,
    `${x}_checksummed_in_percentage`,
    `${x}_verified_count`,
    `${x}_verification_failed_count`,
    `${x}_verified_in_percentage`,
    `${x}_checksum_mismatch_count`,
    `${x}_retrying_verification_count`,
  ]),
  'repositories_checked_count',
  'repositories_checked_failed_count',
  'repositories_checked_in_percentage',
];

describe('POST /geo_nodes', () => {
  it('creates the primary, current when its name is this instance’s', () => {
    expect(Object.keys(primary)).toEqual(NODE_KEYS);
    expect(primary).toEqual({
      id: expect.any(Number),
      name: PRIMARY,
      url: 'https://primary.example.com/',
      internal_url: 'https://primary.example.com/',
      primary: true,
      enabled: true,
      current: true,
      files_max_capacity: 10,
      repos_max_capacity: 25,
      verification_max_capacity: 100,
      container_repositories_max_capacity: 10,
      clone_protocol: 'http',
      web_edit_url: `${api.url}/admin/geo/nodes/${primary.id}/edit`,
      _links: {
        self: `${api.apiUrl}/geo_nodes/${primary.id}`,
        status: `${api.apiUrl}/geo_nodes/${primary.id}/status`,
        repair: `${api.apiUrl}/geo_nodes/${primary.id}/repair`,
      },
    });
  });

  it('creates a secondary with its own fields and records the event', async () => {
    const res = await api.post('/geo_nodes', {
      name: 'eu-west',
      url: 'https://eu.example.com/gitlab',
      internal_url: 'https://eu.internal:8080',
      files_max_capacity: 3,
      sync_object_storage: true,
      enabled: false,
    });
    expect(res.status, res.text).toBe(201);
    expect(Object.keys(res.body)).toEqual(SECONDARY_KEYS);
    expect(res.body).toMatchObject({
      name: 'eu-west',
      url: 'https://eu.example.com/gitlab/',
      internal_url: 'https://eu.internal:8080/',
      primary: false,
      enabled: false,
      current: false,
      files_max_capacity: 3,
      sync_object_storage: true,
      web_geo_projects_url: 'https://eu.example.com/gitlab/admin/geo/projects',
    });
    expect(await api.events(`geo-node-${res.body.id}`)).toEqual([
      {
        type: 'GeoNodeCreated',
        data: {
          id: res.body.id,
          primary: false,
          name: 'eu-west',
          url: 'https://eu.example.com/gitlab/',
          internal_url: 'https://eu.internal:8080/',
          enabled: false,
          files_max_capacity: 3,
          repos_max_capacity: 25,
          verification_max_capacity: 100,
          container_repositories_max_capacity: 10,
          sync_object_storage: true,
        },
        metadata: expect.objectContaining({ actor_id: 1 }),
      },
    ]);
  });

  it('keeps no internal_url equal to the url, and gives a name that is the url its slash', async () => {
    const node = await createSecondary({ name: 'https://same.example.com', url: 'https://same.example.com', internal_url: 'https://same.example.com/' });
    expect(node).toMatchObject({ name: 'https://same.example.com/', url: 'https://same.example.com/', internal_url: 'https://same.example.com/' });
    expect((await api.events(`geo-node-${node.id}`))[0]!.data.internal_url).toBeNull();
  });

  it('answers GitLab’s validation errors', async () => {
    const taken = await createSecondary();
    const cases: [Record<string, unknown>, number, unknown][] = [
      [{}, 400, { error: 'name is missing, url is missing' }],
      [{ name: taken.name.toUpperCase(), url: 'https://x.example.com' }, 400, { message: { name: ['has already been taken'] } }],
      [{ name: 'second-primary', url: 'https://p2.example.com', primary: true }, 400, { message: { primary: ['node already exists'] } }],
      [{ name: 'ftp', url: 'ftp://x.example.com' }, 400, { message: { url: ['is blocked: Only allowed schemes are http, https'] } }],
      [{ name: 'bad', url: 'not a url' }, 400, { message: { url: ['is blocked: URI is invalid'] } }],
      [{ name: 'neg', url: 'https://neg.example.com', repos_max_capacity: -1 }, 400, { message: { repos_max_capacity: ['must be greater than or equal to 0'] } }],
      [{ name: 'x'.repeat(256), url: 'https://long.example.com' }, 400, { message: { name: ['is too long (maximum is 255 characters)'] } }],
      [{ name: PRIMARY.toUpperCase(), url: 'https://self.example.com' }, 400, { message: { name: ['has already been taken'] } }],
      [{ name: 'n', url: 'https://n.example.com', files_max_capacity: 'many' }, 400, { error: 'files_max_capacity is invalid' }],
    ];
    for (const [body, status, answer] of cases) {
      const res = await api.post('/geo_nodes', body);
      expect({ body, status: res.status, answer: res.body }).toEqual({ body, status, answer });
    }
  });

  it('refuses a secondary named as this instance (it would lock it out) and a disabled primary', async () => {
    const other = await startTestServer({ geo: geoConfig({ nodeName: 'me' }) });
    try {
      expect(await other.post('/geo_nodes', { name: 'me', url: 'https://me.example.com' })).toMatchObject({
        status: 400,
        body: { message: { base: ['Current node must be the primary node or you will be locking yourself out'] } },
      });
      expect(await other.post('/geo_nodes', { name: 'me', url: 'https://me.example.com', primary: true, enabled: false })).toMatchObject({
        status: 400,
        body: { message: { enabled: ['Geo primary node cannot be disabled'] } },
      });
      expect((await other.get('/geo_nodes')).body).toEqual([]);
    } finally {
      await other.close();
    }
  });
});

describe('GET /geo_nodes and /geo_nodes/:id', () => {
  it('lists every node by id, paginated, and shows one', async () => {
    const node = await createSecondary();
    const list = await api.get('/geo_nodes', { query: { per_page: 100 } });
    expect(list.status).toBe(200);
    expect(list.headers.get('x-total')).toBe(String(list.body.length));
    expect(list.body.map((n: any) => n.id)).toEqual([...list.body.map((n: any) => n.id)].sort((a, b) => a - b));
    expect(list.body.find((n: any) => n.id === node.id)).toEqual(node);
    expect(await api.get(`/geo_nodes/${node.id}`)).toMatchObject({ status: 200, body: node });
  });

  it('is 404 for an unknown node and 400 for an id that is not an integer', async () => {
    expect(await api.get('/geo_nodes/99999')).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await api.get('/geo_nodes/abc')).toMatchObject({ status: 400, body: { error: 'id is invalid' } });
  });
});

describe('PUT /geo_nodes/:id', () => {
  it('changes what is sent and nothing else', async () => {
    const node = await createSecondary();
    const res = await api.put(`/geo_nodes/${node.id}`, { url: 'https://moved.example.com', repos_max_capacity: 5, enabled: false, internal_url: 'https://in.example.com' });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ ...node, url: 'https://moved.example.com/', internal_url: 'https://in.example.com/', repos_max_capacity: 5, enabled: false, web_geo_projects_url: 'https://moved.example.com/admin/geo/projects' });
    expect((await api.events(`geo-node-${node.id}`)).at(-1)).toMatchObject({
      type: 'GeoNodeUpdated',
      data: { id: node.id, changes: { url: 'https://moved.example.com/', internal_url: 'https://in.example.com/', repos_max_capacity: 5, enabled: false } },
    });
    // Nothing changes: no event.
    expect((await api.put(`/geo_nodes/${node.id}`, { repos_max_capacity: 5 })).status).toBe(200);
    expect(await api.events(`geo-node-${node.id}`)).toHaveLength(2);
  });

  it('edits the primary too (GitLab 12’s NodeUpdateService), but never disables it', async () => {
    expect(await api.put(`/geo_nodes/${primary.id}`, { files_max_capacity: 11 })).toMatchObject({ status: 200, body: { files_max_capacity: 11, current: true } });
    expect(await api.put(`/geo_nodes/${primary.id}`, { enabled: false })).toMatchObject({ status: 400, body: { message: { enabled: ['Geo primary node cannot be disabled'] } } });
  });

  it('frees a name on rename, refuses a taken one, 404 for an unknown node', async () => {
    const a = await createSecondary();
    const b = await createSecondary();
    expect(await api.put(`/geo_nodes/${b.id}`, { name: a.name })).toMatchObject({ status: 400, body: { message: { name: ['has already been taken'] } } });
    expect((await api.put(`/geo_nodes/${a.id}`, { name: `${a.name}-renamed` })).status).toBe(200);
    expect((await api.put(`/geo_nodes/${b.id}`, { name: a.name })).status).toBe(200);
    expect(await api.put('/geo_nodes/99999', { name: 'x' })).toMatchObject({ status: 404, body: NOT_FOUND });
  });
});

describe('DELETE /geo_nodes/:id', () => {
  it('removes the node and its name', async () => {
    const node = await createSecondary();
    expect((await api.del(`/geo_nodes/${node.id}`)).status).toBe(204);
    expect(await api.get(`/geo_nodes/${node.id}`)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await api.del(`/geo_nodes/${node.id}`)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await api.events(`geo-node-${node.id}`)).map((e) => e.type)).toEqual(['GeoNodeCreated', 'GeoNodeDeleted']);
    expect((await api.post('/geo_nodes', { name: node.name, url: node.url })).status).toBe(201);
  });
});

describe('status', () => {
  it('GET /geo_nodes/:id/status measures the current node: the log’s head, its projects, every field of the spec', async () => {
    await createProject(api);
    await waitUntilReadable(api.handle.db);
    const res = await api.get(`/geo_nodes/${primary.id}/status`);
    expect(res.status, res.text).toBe(200);
    for (const field of SPEC_STATUS_FIELDS) expect(res.body, field).toHaveProperty(field);
    expect(res.body).not.toHaveProperty('wikis_count');
    expect(res.body).not.toHaveProperty('repositories_count');
    const head = await api.handle.db.selectFrom('events').select('global_position').orderBy('global_position', 'desc').limit(1).executeTakeFirstOrThrow();
    const projects = await api.get('/projects', { query: { per_page: 1 } });
    expect(res.body).toMatchObject({
      geo_node_id: primary.id,
      healthy: true,
      health: 'Healthy',
      health_status: 'Healthy',
      missing_oauth_application: false,
      projects_count: Number(projects.headers.get('x-total')),
      last_event_id: Number(head.global_position),
      cursor_last_event_id: null,
      cursor_last_event_timestamp: 0,
      db_replication_lag_seconds: null,
      attachments_count: null,
      wikis_synced_in_percentage: '0.00%',
      repositories_checksummed_in_percentage: '100.00%',
      version: '12.10.14-forgelog',
      _links: { self: `${api.apiUrl}/geo_nodes/${primary.id}/status`, node: `${api.apiUrl}/geo_nodes/${primary.id}` },
    });
    expect(res.body.last_event_timestamp).toEqual(expect.any(Number));
  });

  it('a node that never reported has no status; POST /geo_nodes/:id/repair answers the status (nothing to repair)', async () => {
    const node = await createSecondary();
    expect(await api.get(`/geo_nodes/${node.id}/status`)).toMatchObject({ status: 404, body: { message: '404 Status for Geo node not found Not Found' } });
    expect(await api.post(`/geo_nodes/${node.id}/repair`)).toMatchObject({ status: 200, body: null });
    const repaired = await api.post(`/geo_nodes/${primary.id}/repair`);
    expect(repaired).toMatchObject({ status: 200, body: { geo_node_id: primary.id, healthy: true } });
    expect(await api.post('/geo_nodes/99999/repair')).toMatchObject({ status: 404, body: NOT_FOUND });
  });

  it('POST /geo/status takes a secondary’s report, authenticated by its GL-Geo key', async () => {
    const node = await createSecondary();
    const report = (await api.get(`/geo_nodes/${primary.id}/status`)).body;
    const figures = {
      geo_node_id: 0,
      health: '',
      db_replication_lag_seconds: 3,
      projects_count: 7,
      repositories_synced_count: 6,
      repositories_failed_count: 1,
      repositories_verified_count: 7,
      repositories_verification_failed_count: 0,
      repositories_checksum_mismatch_count: 0,
      repositories_retrying_verification_count: 0,
      repositories_checksummed_count: null,
      repositories_checksum_failed_count: null,
      replication_slots_count: null,
      replication_slots_used_count: null,
      last_event_id: report.last_event_id,
      last_event_timestamp: 1_700_000_100,
      cursor_last_event_id: report.last_event_id - 1,
      cursor_last_event_timestamp: 1_700_000_097,
      last_successful_status_check_timestamp: 1_700_000_100,
      version: '12.10.14-forgelog',
      revision: 'r',
    };
    const headers = { Authorization: geoAuthorization(SECRET, node.name) };
    expect(await api.post('/geo/status', figures, { token: null })).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
    expect(await api.post('/geo/status', figures, { token: null, headers: { Authorization: geoAuthorization('x'.repeat(32), node.name) } })).toMatchObject({ status: 401 });
    expect(await api.post('/geo/status', figures, { token: null, headers: { Authorization: geoAuthorization(SECRET, PRIMARY) } })).toMatchObject({ status: 401 });
    expect(await api.post('/geo/status', { ...figures, projects_count: -1 }, { token: null, headers })).toMatchObject({ status: 400, body: { error: 'status is invalid' } });
    const posted = await api.post('/geo/status', figures, { token: null, headers });
    expect(posted.status, posted.text).toBe(201);
    const status = await api.get(`/geo_nodes/${node.id}/status`);
    expect(status.body).toMatchObject({
      geo_node_id: node.id,
      healthy: true,
      db_replication_lag_seconds: 3,
      projects_count: 7,
      repositories_synced_count: 6,
      repositories_failed_count: 1,
      repositories_synced_in_percentage: '85.71%',
      cursor_last_event_id: report.last_event_id - 1,
      cursor_last_event_timestamp: 1_700_000_097,
    });
    const all = await api.get('/geo_nodes/status');
    expect(all.status).toBe(200);
    expect(all.body.map((s: any) => s.geo_node_id)).toEqual(expect.arrayContaining([primary.id, node.id]));
    // The primary counts the secondaries as replication slots, used once they report.
    const slots = (await api.get(`/geo_nodes/${primary.id}/status`)).body;
    expect(slots.replication_slots_used_count).toBeGreaterThanOrEqual(1);
    expect(slots.replication_slots_count).toBeGreaterThan(slots.replication_slots_used_count - 1);
  });

  it('GET /geo/replication/events gives the log as stored to a node, in gap-free order', async () => {
    const node = await createSecondary();
    const headers = { Authorization: geoAuthorization(SECRET, node.name) };
    expect((await api.get('/geo/replication/events', { token: null })).status).toBe(401);
    // An administrator’s token is no node key.
    expect((await api.get('/geo/replication/events')).status).toBe(401);
    const page = await api.get('/geo/replication/events', { token: null, headers, query: { limit: 3 } });
    expect(page.status, page.text).toBe(200);
    expect(page.body.events).toHaveLength(3);
    expect(page.body.events[0]).toMatchObject({ stream_version: 1, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const last = page.body.events[2];
    const next = await api.get('/geo/replication/events', { token: null, headers, query: { limit: 1, after: `${last.transaction_id}:${last.global_position}` } });
    expect(next.body.events[0].global_position).not.toBe(last.global_position);
    expect(await api.get('/geo/replication/events', { token: null, headers, query: { after: 'x' } })).toMatchObject({ status: 400, body: { error: 'after is invalid' } });
    expect(await api.get('/geo/replication/events', { token: null, headers, query: { limit: 5000 } })).toMatchObject({ status: 400 });
  });
});

describe('GET /geo_nodes/current/failures', () => {
  it('is for secondaries only: 403 on the primary, 404 without a current node', async () => {
    expect(await api.get('/geo_nodes/current/failures')).toMatchObject({ status: 403, body: { message: '403 Forbidden - Failures can only be requested from a secondary node' } });
    const other = await startTestServer({ geo: geoConfig({ nodeName: 'nobody' }) });
    try {
      expect(await other.get('/geo_nodes/current/failures')).toMatchObject({ status: 404, body: { message: '404 Geo node not found Not Found' } });
    } finally {
      await other.close();
    }
    expect(await api.get('/geo_nodes/current/failures', { query: { type: 'tree' } })).toMatchObject({ status: 400, body: { error: 'type does not have a valid value' } });
  });
});

describe('a secondary is read-only', () => {
  it('refuses every write of the API with GitLab’s read-only answer, before authentication, and still reads', async () => {
    const secondary = await startTestServer({ geo: geoConfig({ secondary: true, primaryUrl: 'http://127.0.0.1:9', nodeName: 'ro' }) }, { replicate: false });
    try {
      const answer = { status: 403, body: { message: 'You cannot perform write operations on a read-only instance' } };
      expect(await secondary.post('/geo_nodes', { name: 'x', url: 'https://x.example.com' })).toMatchObject(answer);
      expect(await secondary.put('/geo_nodes/1', { name: 'x' }, { token: null })).toMatchObject(answer);
      expect(await secondary.del('/geo_nodes/1')).toMatchObject(answer);
      expect(await secondary.post('/projects', { name: 'p' })).toMatchObject(answer);
      expect(await secondary.get('/geo_nodes', { token: null })).toMatchObject({ status: 401 });
      // Nothing of its own in its log: not even root (it comes from the primary).
      expect(await secondary.handle.db.selectFrom('events').select('global_position').execute()).toEqual([]);
    } finally {
      await secondary.close();
    }
  });
});

describe('the plan: Geo is premium', () => {
  it('below premium the endpoints are not there (Grape’s 404, before authentication)', async () => {
    for (const plan of ['free', 'starter'] as const) {
      await onPlan(api, plan, async () => {
        for (const [method, path] of [
          ['GET', '/geo_nodes'],
          ['POST', '/geo_nodes'],
          ['GET', '/geo_nodes/status'],
          ['GET', '/geo_nodes/current/failures'],
          ['GET', `/geo_nodes/${primary.id}`],
          ['PUT', `/geo_nodes/${primary.id}`],
          ['DELETE', `/geo_nodes/${primary.id}`],
          ['GET', `/geo_nodes/${primary.id}/status`],
          ['POST', `/geo_nodes/${primary.id}/repair`],
          ['POST', '/geo/status'],
          ['GET', '/geo/replication/events'],
        ] as const) {
          for (const token of [undefined, null]) {
            const res = await api.request(method, path, { token, ...(method === 'GET' ? {} : { body: {} }) });
            expect({ plan, method, path, status: res.status, body: res.body }).toEqual({ plan, method, path, status: 404, body: { error: '404 Not Found' } });
          }
        }
      });
    }
    expect((await api.get(`/geo_nodes/${primary.id}`)).status).toBe(200);
    await onPlan(api, 'ultimate', async () => expect((await api.get(`/geo_nodes/${primary.id}`)).status).toBe(200));
  });
});

describe('permissions: administrators only, authentication first', () => {
  const NON_ADMINS: Role[] = ['nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'external', 'blocked'];
  const everyone = (admin: number): Partial<Record<Role, number>> => ({ anonymous: 401, ...Object.fromEntries(NON_ADMINS.map((r) => [r, 403])), admin });
  permissionMatrix(
    {
      'POST /geo_nodes': { instance: everyone(201) },
      'GET /geo_nodes': { instance: everyone(200) },
      'GET /geo_nodes/:id': { instance: everyone(200) },
      'PUT /geo_nodes/:id': { instance: everyone(200) },
      'DELETE /geo_nodes/:id': { instance: everyone(204) },
      'GET /geo_nodes/status': { instance: everyone(200) },
      'GET /geo_nodes/:id/status': { instance: everyone(200) },
      'POST /geo_nodes/:id/repair': { instance: everyone(200) },
      'GET /geo_nodes/current/failures': { instance: everyone(403) },
    },
    async ({ endpoint, caller, status }) => {
      const token = callers[caller].token;
      const node = await createSecondary();
      const res = await {
        'POST /geo_nodes': () => api.post('/geo_nodes', { name: `by-${caller}-${++counter}`, url: 'https://by.example.com' }, { token }),
        'GET /geo_nodes': () => api.get('/geo_nodes', { token }),
        'GET /geo_nodes/:id': () => api.get(`/geo_nodes/${node.id}`, { token }),
        'PUT /geo_nodes/:id': () => api.put(`/geo_nodes/${node.id}`, { repos_max_capacity: 1 }, { token }),
        'DELETE /geo_nodes/:id': () => api.del(`/geo_nodes/${node.id}`, { token }),
        'GET /geo_nodes/status': () => api.get('/geo_nodes/status', { token }),
        'GET /geo_nodes/:id/status': () => api.get(`/geo_nodes/${primary.id}/status`, { token }),
        'POST /geo_nodes/:id/repair': () => api.post(`/geo_nodes/${primary.id}/repair`, {}, { token }),
        'GET /geo_nodes/current/failures': () => api.get('/geo_nodes/current/failures', { token }),
      }[endpoint]!();
      if (res.status === 401) expect(res.body).toEqual({ message: '401 Unauthorized' });
      if (res.status === 403 && caller !== 'admin') {
        expect(res.body).toEqual({ message: caller === 'blocked' ? '403 Forbidden - Your account has been blocked.' : '403 Forbidden' });
        expect((await api.get(`/geo_nodes/${node.id}`)).body).toEqual(node);
      }
      return res.status;
    },
  );
});

describe('projection', () => {
  it('a rebuild from the log gives the same rows', async () => {
    await expectReplayEquivalence(api.handle, [geoNodesProjector]);
  });
});
