import type { Context, MiddlewareHandler } from 'hono';
import { appContext, type AppEnv } from './context.js';

/**
 * The peer address of the request's socket. X-Forwarded-For is written by the client (or
 * any proxy on the way) and is never consulted: behind a reverse proxy, allow the proxy's
 * address in FORGELOG_MONITORING_ALLOWLIST.
 */
export function clientAddress(c: Context): string | undefined {
  return (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress;
}

/** Whether the caller is on the monitoring allow-list (FORGELOG_MONITORING_ALLOWLIST). */
export const isMonitoringClient = (c: Context): boolean => appContext(c).config.monitoringAllowlist.allows(clientAddress(c));

/**
 * GitLab (RequiresWhitelistedMonitoringClient): a monitoring endpoint answers 404 to a
 * client outside the monitoring whitelist — the same 404 as a path that does not exist,
 * so it tells such a caller nothing about the instance or its database.
 */
export const monitoringClientsOnly: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!isMonitoringClient(c)) return c.json({ error: '404 Not Found' }, 404);
  await next();
};
