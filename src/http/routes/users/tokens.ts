import { Hono, type Context } from 'hono';
import { createPersonalAccessToken } from '../../../commands/users.js';
import { TOKEN_SCOPES } from '../../../domain/users.js';
import { toImpersonationToken, toPersonalAccessToken } from '../../entities/users.js';
import { requireWriter } from '../../kernel/auth.js';
import { appContext, today, type AppEnv } from '../../kernel/context.js';
import { documented, REFUSED } from '../../kernel/documented.js';
import { notFound } from '../../../domain/errors.js';
import { paginate } from '../../kernel/pagination.js';
import { optional, rawParams, required, t, withDefault, declaration, integerCheck, type Shape } from '../../kernel/params.js';
import { checkUnmodifiedSince } from '../../kernel/request.js';
import { existingUser, mustBeAdmin, requireAdminFirst } from './lookup.js';
import { run } from '../../../commands/kernel/run.js';
import { users } from '../../../domain/users/aggregate.js';

const listShape = { state: withDefault(t.values(['all', 'active', 'inactive']), 'all') } satisfies Shape;
// GitLab 12: scopes is an optional Array here; the token model validates it.
const impersonationShape = { name: required(t.string()), expires_at: optional(t.date()), scopes: optional(t.array(t.string())) } satisfies Shape;
const personalShape = {
  name: required(t.string()),
  scopes: required(t.array(t.values(TOKEN_SCOPES as unknown as [string, ...string[]]))),
  expires_at: optional(t.date()),
} satisfies Shape;
const ON_USER = { pathIds: ['user_id'] } as const;
const ON_TOKEN = { pathIds: ['user_id', 'impersonation_token_id'] } as const;

export const userTokenRoutes = new Hono<AppEnv>()
  // ───────────── Impersonation and personal access tokens (admin) ─────────────

  .get('/users/:user_id/impersonation_tokens', documented({ summary: "List a user's impersonation tokens", params: listShape, ...ON_USER, auth: 'admin', responses: { 200: 'ImpersonationToken[]', ...REFUSED } }), async (c) => {
    await requireAdminFirst(c);
    const declared = declaration(await rawParams(c));
    declared.check(integerCheck(c, 'user_id'));
    const p = declared.parse(listShape);
    declared.done();
    const user = await existingUser(c, Number(c.req.param('user_id')));
    const now = today(c);
    let query = appContext(c).db.selectFrom('personal_access_tokens').selectAll().where('user_id', '=', user.id).where('impersonation', '=', true);
    if (p.state === 'active') query = query.where('revoked', '=', false).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
    if (p.state === 'inactive') query = query.where((eb) => eb.or([eb('revoked', '=', true), eb('expires_at', '<=', now)]));
    const rows = await paginate(c, query, (q) => q.orderBy('id', 'asc'));
    return c.json(rows.map((row) => toImpersonationToken(row, now)));
  })

  .post('/users/:user_id/impersonation_tokens', documented({ summary: 'Create an impersonation token', params: impersonationShape, ...ON_USER, auth: 'admin', responses: { 201: 'ImpersonationToken', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c, { admin: true });
    const declared = declaration(await rawParams(c));
    declared.check(integerCheck(c, 'user_id'));
    const p = declared.parse(impersonationShape);
    declared.done();
    const user = await existingUser(c, Number(c.req.param('user_id')));
    const { token, tokenId } = await createPersonalAccessToken(
      w,
      user.id,
      { name: p.name, scopes: p.scopes ?? [], expiresAt: p.expires_at ?? null, impersonation: true },
    );
    return c.json(toImpersonationToken(await tokenRow(c, tokenId), today(c), token), 201);
  })

  .get('/users/:user_id/impersonation_tokens/:impersonation_token_id', documented({ summary: 'Get an impersonation token', ...ON_TOKEN, auth: 'admin', responses: { 200: 'ImpersonationToken', ...REFUSED } }), async (c) => {
    await requireAdminFirst(c);
    const { token } = await impersonationToken(c);
    return c.json(toImpersonationToken(token, today(c)));
  })

  .delete('/users/:user_id/impersonation_tokens/:impersonation_token_id', documented({ summary: 'Revoke an impersonation token', ...ON_TOKEN, auth: 'admin', responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c, { admin: true });
    const { user, token } = await impersonationToken(c);
    checkUnmodifiedSince(c, token.created_at);
    await run(w, users, user.id, { type: 'RevokePersonalAccessToken', tokenId: token.id, impersonation: true });
    return c.body(null, 204);
  })

  // GitLab 13.6: an administrator creates a personal access token for a user.
  .post('/users/:user_id/personal_access_tokens', documented({ summary: 'Create a personal access token for a user', params: personalShape, ...ON_USER, auth: 'admin', responses: { 201: 'PersonalAccessToken', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c);
    const declared = declaration(await rawParams(c));
    declared.check(integerCheck(c, 'user_id'));
    const p = declared.parse(personalShape);
    declared.done();
    mustBeAdmin(w.auth);
    const user = await existingUser(c, Number(c.req.param('user_id')));
    const { token, tokenId } = await createPersonalAccessToken(
      w,
      user.id,
      { name: p.name, scopes: p.scopes, expiresAt: p.expires_at ?? null, impersonation: false },
    );
    return c.json(toPersonalAccessToken(await tokenRow(c, tokenId), today(c), token), 201);
  });

function tokenRow(c: Context, tokenId: number) {
  return appContext(c).db.selectFrom('personal_access_tokens').selectAll().where('id', '=', tokenId).executeTakeFirstOrThrow();
}

async function impersonationToken(c: Context) {
  const declared = declaration({});
  declared.check(integerCheck(c, 'user_id'));
  declared.check(integerCheck(c, 'impersonation_token_id'));
  declared.done();
  const user = await existingUser(c, Number(c.req.param('user_id')));
  const tokenId = Number(c.req.param('impersonation_token_id'));
  const token = Number.isSafeInteger(tokenId) && Math.abs(tokenId) <= 2147483647
    ? await appContext(c)
        .db.selectFrom('personal_access_tokens')
        .selectAll()
        .where('id', '=', tokenId)
        .where('user_id', '=', user.id)
        .where('impersonation', '=', true)
        .executeTakeFirst()
    : undefined;
  if (!token) throw notFound('Impersonation Token');
  return { user, token };
}
