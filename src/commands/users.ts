import type { Db } from '../database/database.js';
import { DomainError, conflict } from '../domain/errors.js';
import { type ProfileChanges, type TokenScope, type UserProfile, userStreamId } from '../domain/users.js';
import { type UserCommand } from '../domain/users/decider.js';
import { normalizeEmail, validateProfile } from '../domain/users/profile.js';
import { DEFAULT_SETTINGS } from '../domain/application-settings/attributes.js';
import { currentSettings } from '../projections/application-settings/queries.js';
import { nextId } from './kernel/handler.js';
import { generateToken, hashPassword, randomPassword, tokenDigest } from '../security/secrets.js';
import { type PendingUpload, withUpload } from './uploads.js';
import { run } from './kernel/run.js';
import { users } from '../domain/users/aggregate.js';
import type { Writer } from './kernel/context.js';

/** A new user's profile before the caller's (createUser takes projects_limit from the instance's current settings). */
export const DEFAULT_PROFILE: Omit<UserProfile, 'name' | 'username' | 'email'> = {
  skype: '',
  linkedin: '',
  twitter: '',
  website_url: '',
  organization: '',
  bio: '',
  location: '',
  public_email: '',
  projects_limit: DEFAULT_SETTINGS.default_projects_limit as number,
  is_admin: false,
  can_create_group: true,
  external: false,
  private_profile: false,
  theme_id: 1,
  color_scheme_id: 1,
  note: null,
  shared_runners_minutes_limit: null,
  extra_shared_runners_minutes_limit: null,
  identities: [],
};

export interface CreateUserInput {
  profile: Pick<UserProfile, 'name' | 'username' | 'email'> & Partial<UserProfile>;
  password?: string | undefined;
  /** reset_password / force_random_password: a random password the user must replace. */
  randomPassword?: boolean;
  skipConfirmation?: boolean;
  /** Only for bootstrap: the id to use (root is 1). */
  id?: number;
  /** The avatar, checked (src/commands/uploads.ts); stored with the user's events. */
  avatar?: PendingUpload | undefined;
}

/**
 * GitLab answers a taken email (then username) with 409 before any other validation error:
 * POST /users when the save fails, PUT /users/:id before updating. Only users count here, as
 * GitLab's `User.by_any_email` / `User.by_username`; the claims in the append transaction
 * still guard against races and against group paths.
 */
export async function findUserConflict(db: Db, exceptUserId: number | null, fields: { email?: string | undefined; username?: string | undefined }): Promise<string | null> {
  const held = async (kind: string, key: string) => {
    const row = await db.selectFrom('claims').select('stream_id').where('kind', '=', kind).where('key', '=', key).executeTakeFirst();
    return row !== undefined && row.stream_id.startsWith('user-') && (exceptUserId === null || row.stream_id !== userStreamId(exceptUserId));
  };
  if (fields.email !== undefined && (await held('user_email', fields.email.toLowerCase()))) return 'Email has already been taken';
  if (fields.username !== undefined && (await held('namespace_path', fields.username.toLowerCase()))) return 'Username has already been taken';
  return null;
}

async function validateOrConflict(db: Db, exceptUserId: number | null, profile: Partial<UserProfile>, password: string | undefined) {
  try {
    validateProfile(profile, password);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'invalid') {
      const taken = await findUserConflict(db, exceptUserId, profile);
      if (taken) throw conflict(taken);
    }
    throw error;
  }
}

export async function createUser(w: Writer, input: CreateUserInput) {
  // GitLab (Users::BuildService): projects_limit defaults to Gitlab::CurrentSettings.default_projects_limit.
  const projectsLimit = input.profile.projects_limit ?? ((await currentSettings(w.ctx.db)).default_projects_limit as number);
  const profile: UserProfile = { ...DEFAULT_PROFILE, projects_limit: projectsLimit, ...input.profile, email: normalizeEmail(input.profile.email) };
  // GitLab: reset_password / force_random_password win over password; without them a password is required.
  const password = input.randomPassword ? undefined : (input.password ?? '');
  await validateOrConflict(w.ctx.db, null, profile, password);
  const passwordHash = await hashPassword(password ?? randomPassword());
  const id = input.id ?? (await nextId(w.ctx.db, 'users_id_seq'));
  const namespaceId = await nextId(w.ctx.db, 'namespaces_id_seq');
  return run(
    w,
    users,
    id,
    withUpload(input.avatar, {
      type: 'CreateUser',
      namespaceId,
      profile,
      passwordHash,
      confirmed: input.skipConfirmation ?? false,
      passwordResetRequired: Boolean(input.randomPassword),
      avatar: input.avatar?.ref,
    }),
  );
}

export async function updateUser(
  w: Writer,
  userId: number,
  requested: ProfileChanges,
  password: string | undefined,
  options: { skipReconfirmation?: boolean; avatar?: PendingUpload | undefined } = {},
) {
  const changes = requested.email === undefined ? requested : { ...requested, email: normalizeEmail(requested.email) };
  // GitLab: PUT /users/:id checks the email, then the username, for conflicts first.
  const taken = await findUserConflict(w.ctx.db, userId, changes);
  if (taken) throw conflict(taken);
  validateProfile(changes, password);
  const passwordHash = password === undefined ? null : await hashPassword(password);
  const command: UserCommand = { type: 'UpdateUser', changes, passwordHash, skipReconfirmation: options.skipReconfirmation ?? false, avatar: options.avatar?.ref };
  return run(w, users, userId, withUpload(options.avatar, command));
}

export interface CreateTokenInput {
  name: string;
  /** Validated by the decider against the available scopes. */
  scopes: readonly (TokenScope | string)[];
  expiresAt: string | null;
  impersonation: boolean;
  /** A given token string (bootstrap's FORGELOG_ROOT_TOKEN); otherwise one is generated. */
  token?: string;
}

/** Returns the token string once; only its digest is stored. */
export async function createPersonalAccessToken(w: Writer, userId: number, input: CreateTokenInput) {
  const token = input.token ?? generateToken();
  const tokenId = await nextId(w.ctx.db, 'personal_access_tokens_id_seq');
  await run(
    w,
    users,
    userId,
    {
      type: 'CreatePersonalAccessToken',
      tokenId,
      name: input.name,
      scopes: input.scopes,
      expiresAt: input.expiresAt,
      impersonation: input.impersonation,
      tokenDigest: tokenDigest(token),
    },
  );
  return { token, tokenId };
}
