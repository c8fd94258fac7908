import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { REACTORS } from '../commands/reactors.js';
import type { DatabaseHandle } from '../database/database.js';
import { PROJECTORS } from '../projections/registry.js';
import { readFollowerStatus, readSealStatus } from '../projections/status.js';
import type { AppContext, AppEnv } from './kernel/context.js';
import { documented, mediaTypes } from './kernel/documented.js';
import { monitoringClientsOnly } from './kernel/monitoring.js';

/**
 * Prometheus metrics of one app instance, in a registry of its own (several servers in one
 * process — the test suite — keep apart):
 *
 * - `http_requests_total`, `http_request_duration_seconds` by route template (never the raw
 *   path: ids would make a series per resource), method and status — GitLab's names;
 * - the PostgreSQL pool's size, connections in use, idle, and requests waiting for one;
 * - each projection's and reactor's checkpoint and lag (events, seconds), the sealer's lag,
 *   read from the database at scrape time, so every process shows every worker's progress;
 * - prom-client's default process and Node.js metrics.
 */
/**
 * The template of the route that answered ('/api/v4/users/:id'), for the metrics' and the
 * request log's labels; '/*' when no route did (no route matched, or a middleware answered:
 * a 413, a Geo secondary's refusal). Never the raw path: one series per route, not per resource.
 */
export function routeLabel(c: Context): string {
  const answered = matchedRoutes(c)[c.req.routeIndex];
  return answered && answered.method !== 'ALL' ? answered.path : '/*';
}

export interface AppMetrics {
  readonly registry: Registry;
  /** Counts and times each request; registered first, so it sees every answer. */
  readonly middleware: MiddlewareHandler<AppEnv>;
  /** `GET /-/metrics`, for the monitoring allow-list (404 to everyone else). */
  readonly routes: Hono<AppEnv>;
}

export function createMetrics(app: AppContext, database?: Pick<DatabaseHandle, 'kind' | 'pool'>): AppMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by route template, method and status', labelNames, registers: [registry] });
  const durations = new Histogram({ name: 'http_request_duration_seconds', help: 'Time to answer an HTTP request, by route template, method and status', labelNames, registers: [registry] });

  const pool = database?.pool;
  const poolGauge = (name: string, help: string, value: () => number) =>
    new Gauge({ name: `forgelog_database_pool_${name}`, help, registers: [registry], collect() { this.set(value()); } });
  if (pool) {
    poolGauge('size', 'Most connections the pool opens', () => pool.options.max ?? 10);
    poolGauge('in_use', 'Connections checked out of the pool', () => pool.totalCount - pool.idleCount);
    poolGauge('idle', 'Open connections waiting in the pool', () => pool.idleCount);
    poolGauge('waiting', 'Requests waiting for a connection', () => pool.waitingCount);
  } else if (database?.kind === 'pglite') {
    // PGlite is one session in this process; requests queue for it in the dialect.
    poolGauge('size', 'Most connections the pool opens (the embedded database is one session)', () => 1);
  }

  const followerLabels = ['name', 'kind', 'mode'] as const;
  const checkpoint = new Gauge({ name: 'forgelog_projection_checkpoint_position', help: 'Global position of the last event an async projection or reactor applied', labelNames: followerLabels, registers: [registry] });
  const lagEvents = new Gauge({ name: 'forgelog_projection_lag_events', help: 'Events an async projection or reactor has yet to apply (capped at 100,000; 0 for inline projections)', labelNames: followerLabels, registers: [registry] });
  const lagSeconds = new Gauge({ name: 'forgelog_projection_lag_seconds', help: 'Age of the oldest event an async projection or reactor has yet to apply', labelNames: followerLabels, registers: [registry] });
  const sealCheckpoint = new Gauge({ name: 'forgelog_seal_checkpoint_position', help: 'Global position of the last sealed event', registers: [registry] });
  const sealEvents = new Gauge({ name: 'forgelog_seal_lag_events', help: 'Events not yet covered by a seal (capped at 100,000)', registers: [registry] });
  const sealSeconds = new Gauge({ name: 'forgelog_seal_lag_seconds', help: 'Age of the oldest event not yet covered by a seal', registers: [registry] });
  const logReadable = new Gauge({ name: 'forgelog_metrics_log_readable', help: '1 when this scrape read the projections\u2019 and seals\u2019 progress from the database, 0 when it could not', registers: [registry] });
  const logGauges = [checkpoint, lagEvents, lagSeconds, sealCheckpoint, sealEvents, sealSeconds];

  async function readLog() {
    try {
      const [followers, seal] = await Promise.all([readFollowerStatus(app.db, { projectors: PROJECTORS, reactors: REACTORS }), readSealStatus(app.db)]);
      for (const gauge of logGauges) gauge.reset();
      for (const f of followers) {
        const labels = { name: f.name, kind: f.kind, mode: f.mode };
        if (f.checkpoint) checkpoint.set(labels, Number(f.checkpoint.globalPosition));
        lagEvents.set(labels, f.eventsBehind);
        lagSeconds.set(labels, f.secondsBehind);
      }
      if (seal.sealedThrough) sealCheckpoint.set(Number(seal.sealedThrough.globalPosition));
      sealEvents.set(seal.eventsBehind);
      sealSeconds.set(seal.secondsBehind);
      logReadable.set(1);
    } catch (error) {
      for (const gauge of logGauges) gauge.reset();
      logReadable.set(0);
      app.logger.warn({ err: error }, 'metrics: could not read the projections\u2019 progress');
    }
  }

  const doc = documented({
    summary: "Prometheus metrics, in Prometheus' text format (the monitoring IP allow-list only: 404 to everyone else)",
    auth: 'public',
    responses: { 200: mediaTypes('text/plain; version=0.0.4'), 404: 'Error' },
  });
  const routes = new Hono<AppEnv>().get('/-/metrics', doc, monitoringClientsOnly, async (c) => {
    await readLog();
    return c.body(await registry.metrics(), 200, { 'Content-Type': registry.contentType });
  });

  // One counter child and one histogram child per (method, route, status), made on first use:
  // prom-client would otherwise hash a fresh label object on every request.
  const series = new Map<string, { count: Counter.Internal; time: Histogram.Internal<(typeof labelNames)[number]> }>();
  const middleware: MiddlewareHandler<AppEnv> = async (c, next) => {
    const started = performance.now();
    await next();
    const method = c.req.method;
    const route = routeLabel(c);
    const status = c.res.status;
    const key = `${method} ${status} ${route}`;
    let child = series.get(key);
    if (!child) {
      const labels = { method, route, status: String(status) };
      child = { count: requests.labels(labels), time: durations.labels(labels) };
      series.set(key, child);
    }
    child.count.inc();
    child.time.observe((performance.now() - started) / 1000);
  };

  return { registry, middleware, routes };
}
