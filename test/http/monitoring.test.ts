import type { ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StartupError, loadConfig, parseAllowlist } from '../../src/config.js';
import { listen } from '../../src/runtime.js';
import { startTestServer, type TestServer } from '../support/server.js';

// GitLab 12: /-/health (Gitlab::Middleware::BasicHealthCheck), /-/liveness, /-/readiness and
// /-/metrics (RequiresWhitelistedMonitoringClient) answer only the monitoring whitelist,
// 127.0.0.0/8 and ::1 by default; everyone else gets a 404.
const MONITORING = ['/-/liveness', '/-/readiness', '/-/metrics'];

describe('the monitoring allow-list', () => {
  describe('by default (loopback)', () => {
    let api: TestServer;
    beforeAll(async () => {
      api = await startTestServer();
    });
    afterAll(() => api.close());

    it('answers a client on 127.0.0.1', async () => {
      expect((await api.get('/-/health', { token: null })).text).toBe('GitLab OK');
      expect((await api.get('/-/liveness', { token: null })).body).toEqual({ status: 'ok' });
      const readiness = await api.get('/-/readiness', { token: null });
      expect(readiness.status).toBe(200);
      expect(readiness.body).toMatchObject({ status: 'ok', db_check: [{ status: 'ok' }] });
      const metrics = await api.get('/-/metrics', { token: null });
      expect(metrics.status).toBe(200);
      expect(metrics.text).toContain('# TYPE http_requests_total counter');
    });

    it('answers a client on ::1 (IPv6 loopback)', async () => {
      const { server, port } = await listen(api.runtime, 0, '::1');
      try {
        const health = await fetch(`http://[::1]:${port}/-/health`);
        expect(health.status).toBe(200);
        expect(await health.text()).toBe('GitLab OK');
        expect((await fetch(`http://[::1]:${port}/-/readiness`)).status).toBe(200);
      } finally {
        await new Promise<void>((resolve) => (server as ServerType).close(() => resolve()));
      }
    });
  });

  describe('a client outside it', () => {
    let api: TestServer;
    beforeAll(async () => {
      // The test client connects from 127.0.0.1, which this list leaves out.
      api = await startTestServer({ monitoringAllowlist: parseAllowlist('10.0.0.0/8,::1/128') });
    });
    afterAll(() => api.close());

    it('gets the 404 of a path that does not exist from liveness, readiness and metrics', async () => {
      const missing = await api.get('/-/no-such-endpoint', { token: null });
      expect(missing.status).toBe(404);
      for (const path of MONITORING) {
        const res = await api.get(path, { token: null });
        expect(res.status, path).toBe(404);
        expect(res.body, path).toEqual(missing.body);
        expect(res.text, path).not.toMatch(/db_check|status|http_requests/);
      }
    });

    it('gets an empty 404 from /-/health, as GitLab answers', async () => {
      const res = await api.get('/-/health', { token: null });
      expect(res.status).toBe(404);
      expect(res.text).toBe('');
      expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    });

    it('cannot get in by saying where it comes from (X-Forwarded-For, X-Real-IP)', async () => {
      const headers = { 'X-Forwarded-For': '10.1.2.3', 'X-Real-IP': '10.1.2.3', Forwarded: 'for=10.1.2.3' };
      for (const path of [...MONITORING, '/-/health']) expect((await api.get(path, { token: null, headers })).status, path).toBe(404);
    });

    it('nor with an administrator token', async () => {
      for (const path of MONITORING) expect((await api.get(path)).status, path).toBe(404);
    });

    it('the API itself still answers', async () => {
      expect((await api.get('/version')).status).toBe(200);
    });

    it('an address on the list gets in (here ::1)', async () => {
      const { server, port } = await listen(api.runtime, 0, '::1');
      try {
        expect((await fetch(`http://[::1]:${port}/-/liveness`)).status).toBe(200);
        expect((await fetch(`http://[::1]:${port}/-/metrics`)).status).toBe(200);
      } finally {
        await new Promise<void>((resolve) => (server as ServerType).close(() => resolve()));
      }
    });
  });
});

describe('FORGELOG_MONITORING_ALLOWLIST', () => {
  it('is loopback by default', () => {
    const list = loadConfig({}).monitoringAllowlist;
    expect(list.entries).toEqual(['127.0.0.0/8', '::1/128']);
    for (const address of ['127.0.0.1', '127.255.0.9', '::1', '::ffff:127.0.0.1']) expect(list.allows(address), address).toBe(true);
    for (const address of ['10.0.0.1', '::2', '::ffff:10.0.0.1', '', undefined, 'localhost']) expect(list.allows(address), String(address)).toBe(false);
  });

  it('takes comma-separated CIDR ranges and single addresses of both families', () => {
    const list = loadConfig({ FORGELOG_MONITORING_ALLOWLIST: ' 10.0.0.0/8, 192.168.1.7 ,fd00::/8' }).monitoringAllowlist;
    expect(list.entries).toEqual(['10.0.0.0/8', '192.168.1.7/32', 'fd00::/8']);
    expect(list.allows('10.200.3.4')).toBe(true);
    expect(list.allows('::ffff:10.200.3.4')).toBe(true); // what a server bound to :: sees
    expect(list.allows('192.168.1.7')).toBe(true);
    expect(list.allows('192.168.1.8')).toBe(false);
    expect(list.allows('fd12::1')).toBe(true);
    expect(list.allows('127.0.0.1')).toBe(false);
  });

  it('empty allows no one', () => {
    const list = loadConfig({ FORGELOG_MONITORING_ALLOWLIST: '' }).monitoringAllowlist;
    expect(list.entries).toEqual([]);
    expect(list.allows('127.0.0.1')).toBe(false);
  });

  it('refuses what is not an address or range, at start', () => {
    for (const value of ['localhost', '10.0.0.0/33', '::1/129', '10.0.0.0/8/1', '10.0.0/8', '10.0.0.0/x', '10.0.0.0/-1']) {
      expect(() => loadConfig({ FORGELOG_MONITORING_ALLOWLIST: value }), value).toThrow(StartupError);
      expect(() => loadConfig({ FORGELOG_MONITORING_ALLOWLIST: value }), value).toThrow(/^FORGELOG_MONITORING_ALLOWLIST must be comma-separated IP addresses or CIDR ranges/);
    }
  });
});
