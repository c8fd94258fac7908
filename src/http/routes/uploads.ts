import { Hono, type Context } from 'hono';
import type { Db } from '../../database/database.js';
import { DomainError } from '../../domain/errors.js';
import { avatarContentType, avatarPath, type AvatarModel, type UploadRef } from '../../domain/uploads.js';
import { findUpload } from '../../projections/uploads/queries.js';
import { authenticate } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { routeNotFound } from '../kernel/errors.js';
import { INT4_MAX } from '../kernel/params.js';
import { userGroup, userProject } from '../kernel/scope.js';

/**
 * Avatars, served where GitLab's AvatarUploader puts them and UploadsController serves them
 * (outside /api/v4): `/uploads/-/system/<user|group|project>/avatar/<id>/<filename>`, the
 * model's current avatar only. GitLab 12 (UploadsController#authorize_access!): a user's
 * avatar to anyone, a group's to who may read_group, a project's to who may read_project;
 * everything else is 404 (forgelog has no sign-in page to send anonymous callers to). The
 * caller is authenticated as by the API (a token), when a token is sent.
 */

const STREAMS: Record<AvatarModel, { stream: (id: number) => string; event: string }> = {
  user: { stream: (id) => `user-${id}`, event: 'UserAvatarChanged' },
  group: { stream: (id) => `group-${id}`, event: 'GroupAvatarChanged' },
  project: { stream: (id) => `project-${id}`, event: 'ProjectAvatarChanged' },
};

/** The model's current avatar path (its read row), or undefined when the caller may not see the model. */
async function currentAvatarPath(c: Context, model: AvatarModel, id: number): Promise<string | null | undefined> {
  const { db } = appContext(c);
  if (model === 'user') {
    // GitLab: `when User then true` — a user's avatar is public.
    const row = await db.selectFrom('users').select('avatar_url').where('id', '=', id).executeTakeFirst();
    return row?.avatar_url;
  }
  const auth = await authenticate(c);
  try {
    const scope = model === 'group' ? await userGroup(c, auth, undefined, String(id)) : await userProject(c, auth, undefined, String(id));
    return scope.row.avatar_url;
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found') return undefined;
    throw error;
  }
}

/** The last avatar event of the model's stream: what its current avatar's bytes are. */
async function lastAvatar(db: Db, model: AvatarModel, id: number): Promise<UploadRef | undefined> {
  const { stream, event } = STREAMS[model];
  const row = await db
    .selectFrom('events')
    .select('data')
    .where('stream_id', '=', stream(id))
    .where('event_type', '=', event)
    .orderBy('stream_version', 'desc')
    .limit(1)
    .executeTakeFirst();
  return (row?.data as { avatar: UploadRef } | undefined)?.avatar;
}

const isModel = (model: string): model is AvatarModel => Object.hasOwn(STREAMS, model);

// Constraints checked here, not in the pattern: the app's 405 finder reads patterns without them.
export const uploadRoutes = new Hono<AppEnv>().get('/uploads/-/system/:model/avatar/:id/:filename', async (c) => {
  const model = c.req.param('model');
  const id = Number(c.req.param('id'));
  const filename = c.req.param('filename');
  if (!isModel(model) || !/^[0-9]+$/.test(c.req.param('id')) || id < 1 || id > INT4_MAX) throw routeNotFound();
  const path = await currentAvatarPath(c, model, id);
  // GitLab: the uploader's file must be the one named (an older avatar's URL is gone).
  if (!path || path !== avatarPath(model, id, filename)) throw routeNotFound();
  const { db } = appContext(c);
  const avatar = await lastAvatar(db, model, id);
  const content = avatar && avatar.filename === filename ? await findUpload(db, avatar.sha256) : undefined;
  if (!content) throw routeNotFound();
  return c.body(content as Uint8Array<ArrayBuffer>, 200, {
    'Content-Type': avatarContentType(filename) ?? 'application/octet-stream',
    // GitLab: UploadsActions#show — `expires_in 0.seconds, must_revalidate: true, private: true`, inline.
    'Cache-Control': 'max-age=0, private, must-revalidate',
    // Rails' send_file: an ASCII name and the UTF-8 one (RFC 6266).
    'Content-Disposition': `inline; filename="${filename.replace(/[^\x20-\x7e]|"/g, '?')}"; filename*=UTF-8''${encodeURIComponent(filename)}`,
  });
});
