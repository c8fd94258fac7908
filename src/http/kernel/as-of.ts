import type { MiddlewareHandler } from 'hono';
import { forbidden, notFound, paramErrors } from '../../domain/errors.js';
import { authenticate } from './auth.js';
import { appContext, type AppEnv } from './context.js';
import { unauthorized } from './errors.js';

/** A log position: a positive integer that fits a bigint. */
const POSITION = /^[1-9][0-9]{0,18}$/;

/**
 * `as_of=<log position>` on any GET or HEAD of the API (issue 25 §3, a forgelog extension):
 * the answer the API gave when the log ended at that event, authorization included, read
 * from the read tables as they stood then (src/projections/as-of.ts). For administrators:
 * the caller is authenticated, and found an administrator, by the tables as they are now;
 * the route then runs on the tables as they were (a `sudo` user is looked up there).
 * Writes take no `as_of`: as any parameter a route does not declare, it is ignored.
 */
export const asOf: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return next();
  const position = c.req.query('as_of');
  if (position === undefined) return next();
  // The whole row: a route that wants it later finds it here, not in the tables of then.
  const auth = await authenticate(c, undefined, { wholeUser: true });
  const caller = auth.sudoFrom ?? auth.user;
  if (!caller) throw unauthorized();
  if (!caller.is_admin) throw forbidden('as_of is for administrators');
  if (!POSITION.test(position)) throw paramErrors(['as_of is invalid']);
  const app = appContext(c);
  const checkpoint = await app.asOf.checkpointAt(position);
  if (!checkpoint) throw notFound('Log position');
  await app.asOf.read(checkpoint, async (trx) => {
    c.set('app', { ...app, db: trx });
    try {
      await next();
    } finally {
      c.set('app', app);
    }
  });
  c.header('X-Forgelog-As-Of', position);
};
