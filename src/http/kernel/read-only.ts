import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './context.js';

/**
 * A Geo secondary is read-only (GitLab's Gitlab::Middleware::ReadOnly, before routing and
 * authentication): every POST, PUT, PATCH and DELETE of the API is 403 with GitLab's words.
 * It applies the primary's events only. Mounted only on a secondary (src/http/app.ts).
 */
export const readOnlySecondary: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (['POST', 'PUT', 'PATCH', 'DELETE'].includes(c.req.method)) {
    return c.json({ message: 'You cannot perform write operations on a read-only instance' }, 403);
  }
  await next();
};
