import { Hono, type Context } from 'hono';
import type { UserRow } from '../../../projections/users.js';
import { findCustomAttribute, listCustomAttributes } from '../../../projections/users/custom-attributes.js';
import { findUserById } from '../../../projections/users/queries.js';
import { toCustomAttribute } from '../../entities/users.js';
import { USER_SCOPES, authenticate, requireWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv, type Auth } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { forbidden, notFound, recordNotFound } from '../../../domain/errors.js';
import { rawParams, required, t, declaration, type Shape } from '../../kernel/params.js';
import { userIdFromPath } from './lookup.js';
import { run } from '../../../commands/kernel/run.js';
import { users } from '../../../domain/users/aggregate.js';

const valueShape = { value: required(t.string()) } satisfies Shape;
const ON_USER = { pathIds: ['id'] } as const;

export const userCustomAttributeRoutes = new Hono<AppEnv>()
  // ───────────────────────────── Custom attributes (admin) ─────────────────────────────
  // GitLab: CustomAttributesEndpoints — find the user (404), then authorize (403); GET is
  // open to anonymous callers up to the authorization, so they get 403 rather than 401.

  .get('/users/:id/custom_attributes', documented({ summary: "List a user's custom attributes", ...ON_USER, auth: 'admin', responses: { 200: 'CustomAttribute[]', ...REFUSED } }), async (c) => {
    const id = userIdFromPath(c);
    const auth = await authenticate(c, USER_SCOPES(c));
    const user = await customAttributeOwner(c, id, auth);
    return c.json((await listCustomAttributes(appContext(c).db, user.id)).map(toCustomAttribute));
  })

  .get('/users/:id/custom_attributes/:key', documented({ summary: "Get a user's custom attribute", ...ON_USER, auth: 'admin', responses: { 200: 'CustomAttribute', ...REFUSED } }), async (c) => {
    const id = userIdFromPath(c);
    const auth = await authenticate(c, USER_SCOPES(c));
    const user = await customAttributeOwner(c, id, auth);
    const attribute = await findCustomAttribute(appContext(c).db, user.id, c.req.param('key'));
    if (!attribute) throw recordNotFound('Custom Attribute');
    return c.json(toCustomAttribute(attribute));
  })

  .put('/users/:id/custom_attributes/:key', documented({ summary: "Set a user's custom attribute", params: valueShape, ...ON_USER, auth: 'admin', responses: { 200: 'CustomAttribute', ...REFUSED } }), async (c) => {
    const id = userIdFromPath(c);
    const w = await requireWriter(c);
    const declared = declaration(await rawParams(c));
    const { value } = declared.parse(valueShape);
    declared.done();
    const user = await customAttributeOwner(c, id, w.auth);
    const key = c.req.param('key');
    const { db } = appContext(c);
    await run(w, users, user.id, { type: 'SetUserCustomAttribute', key, value });
    return c.json(toCustomAttribute((await findCustomAttribute(db, user.id, key)) ?? { key, value }));
  })

  .delete('/users/:id/custom_attributes/:key', documented({ summary: "Delete a user's custom attribute", ...ON_USER, auth: 'admin', responses: { 204: null, ...REFUSED } }), async (c) => {
    const id = userIdFromPath(c);
    const w = await requireWriter(c);
    const user = await customAttributeOwner(c, id, w.auth);
    await run(w, users, user.id, { type: 'DeleteUserCustomAttribute', key: c.req.param('key') });
    return c.body(null, 204);
  });

async function customAttributeOwner(c: Context, id: number, auth: Auth): Promise<UserRow> {
  const user = await findUserById(appContext(c).db, id);
  if (!user) throw notFound();
  if (!auth.user?.is_admin) throw forbidden();
  return user;
}

