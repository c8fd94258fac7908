import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealPending } from '../../src/eventstore/seal.js';
import { readSealStatus } from '../../src/projections/status.js';
import { onPostgres } from '../support/database.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition. */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!;
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

function find(samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}

function one(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = find(samples, name, labels);
  if (found.length !== 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0]!.value;
}

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.close());

async function scrape(server = api): Promise<Sample[]> {
  const res = await server.get('/-/metrics', { token: null });
  expect(res.status).toBe(200);
  return parse(res.text);
}

describe('GET /-/metrics', () => {
  it('is Prometheus text format, with the default process and Node.js metrics', async () => {
    const res = await api.get('/-/metrics', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const samples = parse(res.text);
    expect(find(samples, 'process_cpu_user_seconds_total')).toHaveLength(1);
    expect(find(samples, 'process_resident_memory_bytes')).toHaveLength(1);
    expect(find(samples, 'nodejs_heap_size_used_bytes')).toHaveLength(1);
    expect(res.text).toContain('# TYPE http_request_duration_seconds histogram');
  });

  it('counts and times requests by route template, method and status, never by raw path', async () => {
    const { user } = await api.createUser();
    const before = await scrape();
    const count = (status: string) => find(before, 'http_requests_total', { method: 'GET', route: '/api/v4/users/:id', status }).at(0)?.value ?? 0;
    const [ok, missing] = [count('200'), count('404')];
    for (let i = 0; i < 3; i++) expect((await api.get(`/users/${user.id}`)).status).toBe(200);
    expect((await api.get('/users/999999')).status).toBe(404);
    expect((await api.get(`/users/${user.id}.json`)).status).toBe(200);

    const res = await api.get('/-/metrics', { token: null });
    const samples = parse(res.text);
    expect(one(samples, 'http_requests_total', { method: 'GET', route: '/api/v4/users/:id', status: '200' })).toBe(ok + 4);
    expect(one(samples, 'http_requests_total', { method: 'GET', route: '/api/v4/users/:id', status: '404' })).toBe(missing + 1);
    expect(one(samples, 'http_request_duration_seconds_count', { method: 'GET', route: '/api/v4/users/:id', status: '200' })).toBe(ok + 4);
    expect(one(samples, 'http_request_duration_seconds_bucket', { method: 'GET', route: '/api/v4/users/:id', status: '200', le: '+Inf' })).toBe(ok + 4);
    expect(one(samples, 'http_requests_total', { method: 'POST', route: '/api/v4/users', status: '201' })).toBeGreaterThanOrEqual(1);
    // No series per resource: the raw paths appear nowhere.
    expect(res.text).not.toContain(`/users/${user.id}`);
    expect(res.text).not.toContain('/users/999999');
  });

  it('labels a path no route matches with the catch-all, not the path', async () => {
    expect((await api.get('/no/such/thing/42')).status).toBe(404);
    const res = await api.get('/-/metrics', { token: null });
    expect(res.text).not.toContain('/no/such/thing');
    expect(one(parse(res.text), 'http_requests_total', { method: 'GET', route: '/*', status: '404' })).toBeGreaterThanOrEqual(1);
  });

  it('reports the database pool', async () => {
    const samples = await scrape();
    if (onPostgres) {
      expect(one(samples, 'forgelog_database_pool_size')).toBe(10);
      const inUse = one(samples, 'forgelog_database_pool_in_use');
      const idle = one(samples, 'forgelog_database_pool_idle');
      expect(inUse + idle).toBe(api.handle.pool!.totalCount);
      // The notifier's LISTEN and the worker's lock connections are held apart from the requests' pool.
      expect(api.handle.sessions!.totalCount).toBeGreaterThanOrEqual(2);
      expect(one(samples, 'forgelog_database_pool_waiting')).toBe(0);
    } else {
      // The embedded database is one session.
      expect(one(samples, 'forgelog_database_pool_size')).toBe(1);
      expect(find(samples, 'forgelog_database_pool_in_use')).toHaveLength(0);
    }
  });

  it('shows inline projections never behind, and a stopped reactor falling behind and catching up', async () => {
    const worker = api.runtime.worker!;
    await worker.catchUp();
    let samples = await scrape();
    for (const name of ['users', 'namespaces', 'members', 'projects']) {
      const labels = { name, kind: 'projection', mode: 'inline' };
      expect(one(samples, 'forgelog_projection_lag_events', labels), name).toBe(0);
      expect(one(samples, 'forgelog_projection_lag_seconds', labels), name).toBe(0);
    }
    const reactor = { name: 'reactor:group-removal', kind: 'reactor', mode: 'async' };
    expect(one(samples, 'forgelog_projection_lag_events', reactor)).toBe(0);
    const head = await headPosition();
    expect(one(samples, 'forgelog_projection_checkpoint_position', reactor)).toBe(head);

    await worker.stop();
    try {
      await api.createUser();
      await api.createUser();
      samples = await scrape();
      const behind = Number((await sql<{ n: string }>`select count(*) as n from events where global_position > ${head}`.execute(api.handle.db)).rows[0]!.n);
      expect(behind).toBeGreaterThanOrEqual(4);
      expect(one(samples, 'forgelog_projection_lag_events', reactor)).toBe(behind);
      expect(one(samples, 'forgelog_projection_lag_seconds', reactor)).toBeGreaterThanOrEqual(0);
      expect(one(samples, 'forgelog_projection_checkpoint_position', reactor)).toBe(head);
      // Inline projections were written with the events.
      expect(one(samples, 'forgelog_projection_lag_events', { name: 'users' })).toBe(0);
    } finally {
      worker.start();
    }
    await worker.catchUp();
    samples = await scrape();
    expect(one(samples, 'forgelog_projection_lag_events', reactor)).toBe(0);
    expect(one(samples, 'forgelog_projection_lag_seconds', reactor)).toBe(0);
    expect(one(samples, 'forgelog_projection_checkpoint_position', reactor)).toBe(await headPosition());
  });

  it('reports the seal lag', async () => {
    await api.createUser();
    // Seals cover what gap-free readers see: a transaction elsewhere in the cluster (another
    // test file's) can hold the newest events back for a moment.
    const deadline = Date.now() + 30_000;
    while ((await sealPending(api.handle.db), (await readSealStatus(api.handle.db)).eventsBehind > 0) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const samples = await scrape();
    expect(one(samples, 'forgelog_seal_lag_events')).toBe(0);
    expect(one(samples, 'forgelog_seal_lag_seconds')).toBe(0);
    expect(one(samples, 'forgelog_seal_checkpoint_position')).toBe(await headPosition());
    expect(one(samples, 'forgelog_metrics_log_readable')).toBe(1);
  });

  it('keeps one registry per server: another server in this process counts its own requests', async () => {
    const other = await startTestServer();
    try {
      for (let i = 0; i < 3; i++) expect((await other.get('/version')).status).toBe(200);
      const mine = await scrape();
      const theirs = await scrape(other);
      expect(one(theirs, 'http_requests_total', { route: '/api/v4/version', status: '200' })).toBe(3);
      expect(find(mine, 'http_requests_total', { route: '/api/v4/version' })).toHaveLength(0);
    } finally {
      await other.close();
    }
  });
});

async function headPosition(): Promise<number> {
  const { rows } = await sql<{ p: string }>`select max(global_position) as p from events`.execute(api.handle.db);
  return Number(rows[0]!.p);
}
