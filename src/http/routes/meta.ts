import { Hono } from 'hono';
import { sql } from 'kysely';
import { VERSION, REVISION } from '../../version.js';
import { authenticate } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented } from '../kernel/documented.js';
import { unauthorized } from '../kernel/errors.js';
import { isMonitoringClient, monitoringClientsOnly } from '../kernel/monitoring.js';

const VERSION_BODY = { type: 'object', properties: { version: { type: 'string' }, revision: { type: 'string' } }, required: ['version', 'revision'] } as const;
const STATUS_BODY = { type: 'object', properties: { status: { type: 'string' } }, required: ['status'] } as const;

export const metaRoutes = new Hono<AppEnv>().get('/version', documented({ summary: 'The version of GitLab this API is', responses: { 200: VERSION_BODY } }), async (c) => {
  // GitLab: /version needs an authenticated user.
  const auth = await authenticate(c);
  if (!auth.user) throw unauthorized();
  return c.json({ version: VERSION, revision: REVISION });
});

/** GitLab's health checks (outside /api/v4), for the monitoring allow-list only. */
export const healthRoutes = new Hono<AppEnv>()
  // GitLab: Gitlab::Middleware::BasicHealthCheck answers an empty text/plain 404 outside the whitelist.
  .get('/-/health', documented({ summary: "GitLab's health check (the monitoring allow-list only)", auth: 'public', responses: { 200: { type: 'string', contentMediaType: 'text/plain' }, 404: null } }), (c) => (isMonitoringClient(c) ? c.text('GitLab OK') : c.text('', 404)))
  .use('/-/liveness', monitoringClientsOnly)
  .use('/-/readiness', monitoringClientsOnly)
  .get('/-/liveness', documented({ summary: 'Liveness (the monitoring allow-list only)', auth: 'public', responses: { 200: STATUS_BODY, 404: null } }), (c) => c.json({ status: 'ok' }))
  .get('/-/readiness', documented({ summary: 'Readiness: the database answers (the monitoring allow-list only)', auth: 'public', responses: { 200: STATUS_BODY, 404: null, 503: STATUS_BODY } }), async (c) => {
    try {
      await sql`select 1`.execute(appContext(c).db);
      return c.json({ status: 'ok', master_check: [{ status: 'ok' }], db_check: [{ status: 'ok' }] });
    } catch (error) {
      return c.json({ status: 'failed', db_check: [{ status: 'failed', message: String(error) }] }, 503);
    }
  });
