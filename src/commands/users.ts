import type { EventMetadata } from '../eventstore/types.js';
import { notFound } from '../domain/errors.js';
import {
  type ProfileChanges,
  type TokenScope,
  type UserCommand,
  type UserProfile,
  type UserState,
  userClaims,
  userDecider,
  userEventIndex,
  userStreamId,
  validateProfile,
} from '../domain/users.js';
import { type CommandContext, type CommandResult, handleCommand, nextId } from './handler.js';
import { generateToken, hashPassword, randomPassword, tokenDigest } from './secrets.js';

function run(ctx: CommandContext, userId: number, command: UserCommand, metadata: EventMetadata): Promise<CommandResult<UserState>> {
  return handleCommand(ctx, {
    streamId: userStreamId(userId),
    decider: userDecider,
    command,
    metadata,
    claims: userClaims,
    index: userEventIndex,
  });
}

export const DEFAULT_PROFILE: Omit<UserProfile, 'name' | 'username' | 'email'> = {
  skype: '',
  linkedin: '',
  twitter: '',
  website_url: '',
  organization: '',
  bio: '',
  location: '',
  public_email: '',
  projects_limit: 100000,
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
}

export async function createUser(ctx: CommandContext, input: CreateUserInput, metadata: EventMetadata) {
  const profile: UserProfile = { ...DEFAULT_PROFILE, ...input.profile };
  const password = input.randomPassword ? undefined : input.password;
  validateProfile(profile, password);
  const passwordHash = await hashPassword(password ?? randomPassword());
  const id = input.id ?? (await nextId(ctx.db, 'users_id_seq'));
  const namespaceId = await nextId(ctx.db, 'namespaces_id_seq');
  return run(
    ctx,
    id,
    { type: 'CreateUser', id, namespaceId, profile, passwordHash, confirmed: input.skipConfirmation ?? false, passwordResetRequired: Boolean(input.randomPassword) },
    metadata,
  );
}

export async function updateUser(ctx: CommandContext, userId: number, changes: ProfileChanges, password: string | undefined, metadata: EventMetadata) {
  validateProfile(changes, password);
  const passwordHash = password === undefined ? null : await hashPassword(password);
  return run(ctx, userId, { type: 'UpdateUser', changes, passwordHash }, metadata);
}

export const blockUser = (ctx: CommandContext, userId: number, metadata: EventMetadata) => run(ctx, userId, { type: 'BlockUser' }, metadata);
export const unblockUser = (ctx: CommandContext, userId: number, metadata: EventMetadata) => run(ctx, userId, { type: 'UnblockUser' }, metadata);

export function deleteUser(ctx: CommandContext, userId: number, hardDelete: boolean, soleOwnerOfGroups: number, metadata: EventMetadata) {
  return run(ctx, userId, { type: 'DeleteUser', hardDelete, soleOwnerOfGroups }, metadata);
}

export function setUserStatus(ctx: CommandContext, userId: number, status: { emoji: string; message: string; messageHtml: string }, metadata: EventMetadata) {
  return run(ctx, userId, { type: 'SetUserStatus', ...status }, metadata);
}

export interface CreateTokenInput {
  name: string;
  scopes: readonly TokenScope[];
  expiresAt: string | null;
  impersonation: boolean;
  /** A given token string (bootstrap's FORGELOG_ROOT_TOKEN); otherwise one is generated. */
  token?: string;
}

/** Returns the token string once; only its digest is stored. */
export async function createPersonalAccessToken(ctx: CommandContext, userId: number, input: CreateTokenInput, metadata: EventMetadata) {
  const token = input.token ?? generateToken();
  const tokenId = await nextId(ctx.db, 'personal_access_tokens_id_seq');
  const result = await run(
    ctx,
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
    metadata,
  );
  const record = result.state.tokens.get(tokenId);
  if (!record) throw notFound('User');
  return { token, tokenId, result };
}

export function revokePersonalAccessToken(ctx: CommandContext, userId: number, tokenId: number, impersonation: boolean, metadata: EventMetadata) {
  return run(ctx, userId, { type: 'RevokePersonalAccessToken', tokenId, impersonation }, metadata);
}
