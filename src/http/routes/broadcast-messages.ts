import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { DEFAULT_COLOR, DEFAULT_FONT, broadcastMessages } from '../../domain/broadcast-messages.js';
import { paramErrors, recordNotFound } from '../../domain/errors.js';
import { broadcastMessagesQuery, findBroadcastMessage } from '../../projections/broadcast-messages/queries.js';
import type { BroadcastMessageRow } from '../../projections/broadcast-messages/tables.js';
import { toBroadcastMessage } from '../entities/broadcast-messages.js';
import { requireAdmin, requireWriter } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented, REFUSED } from '../kernel/documented.js';
import { paginate } from '../kernel/pagination.js';
import { declaration, integerCheck, optional, pathId, params, rawParams, required, t, type RawParams } from '../kernel/params.js';
import { checkUnmodifiedSince } from '../kernel/request.js';
import { newId, run } from '../../commands/kernel/run.js';

const HOUR_MS = 60 * 60 * 1000;

/** Grape coerces an empty DateTime to nil. */
const datetime = () => z.preprocess((v) => (v === '' ? undefined : v), t.datetime().optional());

const createParams = {
  message: required(t.string()),
  starts_at: optional(datetime()),
  ends_at: optional(datetime()),
  color: optional(t.string()),
  font: optional(t.string()),
  target_path: optional(t.string()),
};

const updateParams = { ...createParams, message: optional(t.string()) };

/**
 * A parameter as `declared_params(include_missing: false)` hands it to the model: the parsed
 * value, null when sent as null (or an empty DateTime), undefined when not sent.
 */
function sent<T>(raw: RawParams, name: string, parsed: T | undefined): T | null | undefined {
  if (parsed !== undefined) return parsed;
  return name in raw && (raw[name] === null || raw[name] === '') ? null : undefined;
}

const isoOrAbsent = (date: Date | null | undefined) => (date === null || date === undefined ? date : date.toISOString());

/** `:id` is `requires :id, type: Integer` (checked after the admin check): "id is invalid", or no such record. */
function messageId(c: Context): number {
  const check = integerCheck(c, 'id');
  if (check) throw paramErrors([check]);
  const id = pathId(c, 'id');
  if (id === null) throw recordNotFound('BroadcastMessage');
  return id;
}

async function existing(c: Context, id: number): Promise<BroadcastMessageRow> {
  const row = await findBroadcastMessage(appContext(c).db, id);
  if (!row) throw recordNotFound('BroadcastMessage');
  return row;
}

async function present(c: Context, id: number, status: 200 | 201 = 200) {
  const row = await existing(c, id);
  return c.json(toBroadcastMessage(row, appContext(c).commands.now()), status);
}

/** `requires :id, type: Integer`. */
const ON_MESSAGE = { pathIds: ['id'] } as const;

/** GitLab's API::BroadcastMessages (12.x): `before { authenticated_as_admin! }` on every endpoint. */
export const broadcastMessageRoutes = new Hono<AppEnv>()
  .get('/broadcast_messages', documented({ summary: 'List broadcast messages', auth: 'admin', responses: { 200: 'BroadcastMessage[]', 403: 'Error' } }), async (c) => {
    await requireAdmin(c);
    const { db, commands } = appContext(c);
    const rows = await paginate(c, broadcastMessagesQuery(db), (q) => q.orderBy('id', 'desc'));
    const now = commands.now();
    return c.json(rows.map((row) => toBroadcastMessage(row, now)));
  })

  .get('/broadcast_messages/:id', documented({ summary: 'Get a broadcast message', ...ON_MESSAGE, auth: 'admin', responses: { 200: 'BroadcastMessage', ...REFUSED } }), async (c) => {
    await requireAdmin(c);
    return present(c, messageId(c));
  })

  .post('/broadcast_messages', documented({ summary: 'Create a broadcast message', params: createParams, auth: 'admin', responses: { 201: 'BroadcastMessage', 403: 'Error' } }), async (c) => {
    const w = await requireWriter(c, { admin: true });
    const p = await params(c, createParams);
    const now = w.ctx.now();
    const id = await newId(w, broadcastMessages);
    await run(
      w,
      broadcastMessages,
      id,
      {
        type: 'CreateBroadcastMessage',
        attributes: {
          message: p.message,
          starts_at: (p.starts_at ?? now).toISOString(),
          ends_at: (p.ends_at ?? new Date(now.getTime() + HOUR_MS)).toISOString(),
          color: p.color ?? DEFAULT_COLOR,
          font: p.font ?? DEFAULT_FONT,
          target_path: p.target_path ?? null,
        },
      },
    );
    return present(c, id, 201);
  })

  .put('/broadcast_messages/:id', documented({ summary: 'Update a broadcast message', params: updateParams, ...ON_MESSAGE, auth: 'admin', responses: { 200: 'BroadcastMessage', ...REFUSED } }), async (c) => {
    const w = await requireWriter(c, { admin: true });
    const raw = await rawParams(c);
    const declared = declaration(raw);
    declared.check(integerCheck(c, 'id'));
    const p = declared.parse(updateParams);
    declared.done();
    const id = messageId(c);
    await existing(c, id);
    await run(
      w,
      broadcastMessages,
      id,
      {
        type: 'UpdateBroadcastMessage',
        attributes: {
          message: sent(raw, 'message', p.message),
          starts_at: isoOrAbsent(sent(raw, 'starts_at', p.starts_at)),
          ends_at: isoOrAbsent(sent(raw, 'ends_at', p.ends_at)),
          color: sent(raw, 'color', p.color),
          font: sent(raw, 'font', p.font),
          target_path: sent(raw, 'target_path', p.target_path),
        },
      },
    );
    return present(c, id);
  })

  .delete('/broadcast_messages/:id', documented({ summary: 'Delete a broadcast message', ...ON_MESSAGE, auth: 'admin', responses: { 204: null, ...REFUSED, 412: 'Error' } }), async (c) => {
    const w = await requireWriter(c, { admin: true });
    const id = messageId(c);
    const row = await existing(c, id);
    checkUnmodifiedSince(c, row.updated_at);
    await run(w, broadcastMessages, id, { type: 'DeleteBroadcastMessage' });
    return c.body(null, 204);
  });
