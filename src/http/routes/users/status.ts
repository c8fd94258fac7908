import { Hono } from 'hono';
import { isBlank } from '../../../domain/users.js';
import { findUserByIdOrUsername } from '../../../projections/users/queries.js';
import { toUserPublic, toUserStatus, toUserWithAdmin } from '../../entities/users.js';
import { USER_SCOPES, authenticate, requireUserRow, withWriter } from '../../kernel/auth.js';
import { appContext, type AppEnv } from '../../kernel/context.js';
import { documented } from '../../kernel/documented.js';
import { notFound } from '../../../domain/errors.js';
import { optional, rawParams, t, declaration, type Shape } from '../../kernel/params.js';
import { statusHtml } from './lookup.js';
import { run } from '../../../commands/kernel/run.js';
import { users } from '../../../domain/users/aggregate.js';

/** The current user and user status endpoints. */
const statusShape = { emoji: optional(t.string()), message: optional(t.string()) } satisfies Shape;

export const currentUserRoutes = new Hono<AppEnv>()
  // ───────────────────────────── Current user and status ─────────────────────────────

  .get('/user', documented({ summary: 'The current user', responses: { 200: ['UserPublic', 'UserWithAdmin'] } }), async (c) => {
    const auth = await requireUserRow(c, USER_SCOPES(c));
    const { config } = appContext(c);
    return c.json(auth.user.is_admin ? toUserWithAdmin(auth.user, config) : toUserPublic(auth.user, config));
  })

  .get('/user/status', documented({ summary: "The current user's status", responses: { 200: 'UserStatus' } }), async (c) => {
    const auth = await requireUserRow(c, USER_SCOPES(c));
    return c.json(toUserStatus(auth.user));
  })

  .put('/user/status', documented({ summary: "Set the current user's status", params: statusShape, responses: { 200: 'UserStatus' } }), (c) =>
    withWriter(c, async (w) => {
      const declared = declaration(await rawParams(c));
      const p = declared.parse(statusShape);
      declared.done();
      // GitLab: declared_params keeps an omitted field as nil, so it is stored as null.
      const emoji = p.emoji ?? null;
      const message = p.message ?? null;
      const { state } = await run(w, users, w.auth.user.id, { type: 'SetUserStatus', emoji, message, messageHtml: statusHtml(message) });
      // GitLab presents `current_user.status`, which is nil once cleared: the body is `null`.
      if (isBlank(emoji) && isBlank(message)) return c.json(null);
      // Answered from the command's state: the inline projection wrote the same values.
      const status = state.status;
      return c.json(toUserStatus({ status_emoji: status?.emoji ?? null, status_message: status?.message ?? null, status_message_html: status?.message_html ?? null }));
    }),
  )

  .get('/users/:id_or_username/status', documented({ summary: "A user's status", auth: 'optional', responses: { 200: 'UserStatus', 404: 'Error' } }), async (c) => {
    await authenticate(c, USER_SCOPES(c));
    const user = await findUserByIdOrUsername(appContext(c).db, c.req.param('id_or_username'));
    if (!user) throw notFound('User');
    return c.json(toUserStatus(user));
  });
