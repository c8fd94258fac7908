import { Hono, type Context } from 'hono';
import { DomainError } from '../../domain/errors.js';
import { avatarContentType, avatarPath, type AvatarModel } from '../../domain/uploads.js';
import { findUpload } from '../../projections/uploads/queries.js';
import { authenticate } from '../kernel/auth.js';
import { appContext, type AppEnv } from '../kernel/context.js';
import { documented } from '../kernel/documented.js';
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

const MODELS: readonly AvatarModel[] = ['user', 'group', 'project'];
const isModel = (model: string): model is AvatarModel => (MODELS as readonly string[]).includes(model);

type AvatarColumns = { readonly avatar_url: string | null; readonly avatar_sha256: string | null };

/**
 * The model's current avatar (path and upload) from its read row, as the avatar events
 * projected them; undefined when the caller may not see the model.
 */
async function currentAvatar(c: Context, model: AvatarModel, id: number): Promise<AvatarColumns | undefined> {
  const { db } = appContext(c);
  if (model === 'user') {
    // GitLab: `when User then true` — a user's avatar is public.
    return db.selectFrom('users').select(['avatar_url', 'avatar_sha256']).where('id', '=', id).executeTakeFirst();
  }
  const auth = await authenticate(c);
  try {
    const scope = model === 'group' ? await userGroup(c, auth, undefined, String(id)) : await userProject(c, auth, undefined, String(id));
    return scope.row;
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found') return undefined;
    throw error;
  }
}

export const uploadRoutes = new Hono<AppEnv>().get(
  '/uploads/-/system/:model{user|group|project}/avatar/:id{[0-9]+}/:filename',
  documented({ summary: "A user's, group's or project's avatar", auth: 'public', responses: { 200: { type: 'string', contentMediaType: 'application/octet-stream' }, 404: 'Error' } }),
  async (c) => {
    const model = c.req.param('model');
    const id = Number(c.req.param('id'));
    const filename = c.req.param('filename');
    if (!isModel(model) || id < 1 || id > INT4_MAX) throw routeNotFound();
    const avatar = await currentAvatar(c, model, id);
    // GitLab: the uploader's file must be the one named (an older avatar's URL is gone).
    if (!avatar?.avatar_url || !avatar.avatar_sha256 || avatar.avatar_url !== avatarPath(model, id, filename)) throw routeNotFound();
    const content = await findUpload(appContext(c).db, avatar.avatar_sha256);
    if (!content) throw routeNotFound();
    return c.body(content as Uint8Array<ArrayBuffer>, 200, {
      'Content-Type': avatarContentType(filename) ?? 'application/octet-stream',
      // GitLab: UploadsActions#show — `expires_in 0.seconds, must_revalidate: true, private: true`, inline.
      'Cache-Control': 'max-age=0, private, must-revalidate',
      // Rails' send_file: an ASCII name and the UTF-8 one (RFC 6266).
      'Content-Disposition': `inline; filename="${filename.replace(/[^\x20-\x7e]|"/g, '?')}"; filename*=UTF-8''${encodeURIComponent(filename)}`,
    });
  },
);
