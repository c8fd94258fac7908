import { ACCESS } from '../domain/access.js';
import { DomainError, conflict } from '../domain/errors.js';
import type { MemberCommand } from '../domain/members.js';
import { cleanPath, scim } from '../domain/scim.js';
import { normalizeEmail, validateProfile } from '../domain/users/profile.js';
import type { UserProfile } from '../domain/users.js';
import type { StoredEvent } from '../eventstore/types.js';
import { currentSettings } from '../projections/application-settings/queries.js';
import { activeMemberUserIds, activeOwnerCount, directMembersQuery } from '../projections/members/members.js';
import { identitiesOfUser, namespacePathTaken } from '../projections/scim/queries.js';
import { handleCommands, nextId } from './kernel/handler.js';
import { generateToken, hashPassword, randomPassword, tokenDigest } from '../security/secrets.js';
import { DEFAULT_PROFILE, findUserConflict } from './users.js';
import { causedBy } from './kernel/causation.js';
import { members } from '../domain/members.js';
import { run, spec } from './kernel/run.js';
import { users } from '../domain/users/aggregate.js';
import type { CommandContext, Writer } from './kernel/context.js';
import type { Reactor } from './kernel/reactor.js';


/** A new SCIM token for the group, replacing its previous one: returned once, kept as a digest. */
export async function generateScimToken(w: Writer, groupId: number): Promise<string> {
  const token = generateToken();
  await run(w, scim, groupId, { type: 'GenerateScimToken', tokenDigest: tokenDigest(token) });
  return token;
}

export interface ProvisionInput {
  readonly externUid: string;
  readonly username: string;
  readonly email: string;
  readonly name: string;
}

/**
 * GitLab's Namespace.clean_path: the cleaned name, then "1", "2"… appended while a namespace
 * (a user or a group) holds the path.
 */
async function availableUsername(ctx: CommandContext, requested: string): Promise<string> {
  const base = cleanPath(requested);
  let candidate = base;
  for (let counter = 1; await namespacePathTaken(ctx.db, candidate); counter++) candidate = `${base}${counter}`;
  return candidate;
}

/**
 * EE::Gitlab::Scim::ProvisioningService (GitLab 12, scim_identities off): a new user with a
 * random password and an unconfirmed email, its guest membership of the group and its SAML
 * identity, all committed together or not at all. A taken email is a conflict; invalid
 * attributes are the user's validation errors. Returns the new user's id.
 */
export async function provisionScimUser(w: Writer, groupId: number, input: ProvisionInput): Promise<number> {
  const username = await availableUsername(w.ctx, input.username);
  const projectsLimit = (await currentSettings(w.ctx.db)).default_projects_limit as number;
  const profile: UserProfile = { ...DEFAULT_PROFILE, projects_limit: projectsLimit, name: input.name, username, email: normalizeEmail(input.email) };
  try {
    validateProfile(profile);
  } catch (error) {
    // GitLab: a save failing on a taken email (or username) is the provisioning's conflict.
    if (error instanceof DomainError && error.code === 'invalid') {
      const taken = await findUserConflict(w.ctx.db, null, profile);
      if (taken) throw conflict(taken);
    }
    throw error;
  }
  const passwordHash = await hashPassword(randomPassword());
  const userId = await nextId(w.ctx.db, 'users_id_seq');
  const namespaceId = await nextId(w.ctx.db, 'namespaces_id_seq');
  const identityId = await nextId(w.ctx.db, 'group_saml_identities_id_seq');
  // Group#add_user(user, :guest) with no current user: nobody created the membership.
  const membership: MemberCommand = { type: 'AddMember', userId, accessLevel: ACCESS.GUEST, expiresAt: null, actorId: null, inherited: null };
  await handleCommands(w, [
    spec(users, userId, { type: 'CreateUser', namespaceId, profile, passwordHash, confirmed: false, passwordResetRequired: false }),
    spec(members, { type: 'Namespace', id: groupId }, membership),
    spec(scim, groupId, { type: 'LinkGroupSamlIdentity', identityId, userId, externUid: input.externUid }),
  ]);
  return userId;
}

/**
 * GroupSaml::Identity::DestroyService (transactional): the identity goes, and with it the
 * user's membership of the group, unless the user is its last owner; the account stays.
 */
export async function deprovisionScimIdentity(w: Writer, groupId: number, identity: { externUid: string; userId: number }): Promise<void> {
  const source = { type: 'Namespace', id: groupId } as const;
  const member = await directMembersQuery(w.ctx.db, source, { userId: identity.userId }).executeTakeFirst();
  const lastOwner = member?.access_level === ACCESS.OWNER && (await activeOwnerCount(w.ctx.db, [groupId])) <= 1;
  const unlink = spec(scim, groupId, { type: 'UnlinkGroupSamlIdentity', externUid: identity.externUid });
  if (!member || lastOwner) {
    await handleCommands(w, [unlink]);
    return;
  }
  const guard = { ancestorOwners: 0, activeUserIds: await activeMemberUserIds(w.ctx.db, source), personalOwnerId: null };
  await handleCommands(w, [unlink, spec(members, source, { type: 'RemoveMember', userId: identity.userId, actorId: null, guard })]);
}

/**
 * A deleted user's identities go with it (GitLab: `has_many :identities, dependent:
 * :destroy`), so its extern_uid can be provisioned again. Idempotent: an identity already
 * unlinked is no longer listed.
 */
export const scimUserRemovalReactor: Reactor = {
  name: 'scim-user-removal',
  handles: ['UserDeleted'],
  async react(event: StoredEvent, ctx: CommandContext) {
    const { id } = event.data as { id: number };
    const w = causedBy(ctx, event);
    for (const identity of await identitiesOfUser(ctx.db, id)) {
      await run(w, scim, identity.group_id, { type: 'UnlinkGroupSamlIdentity', externUid: identity.extern_uid });
    }
  },
};
