import { z } from 'zod';
import { type Decider, unhandled } from './decider.js';
import type { EventOf, EventSchemas, Upcasters } from './events.js';
import { ACCESS, GROUP_ACCESS_LEVELS, PROJECT_ACCESS_LEVELS, type MemberSourceType } from './access.js';
import { conflict, forbidden, invalid, recordNotFound } from './errors.js';
import { defineAggregate } from './aggregate.js';

/**
 * Members and access requests of one group or project: one aggregate per source, stream
 * `members-group-<id>` / `members-project-<id>`.
 */

// ───────────────────────────── Events ─────────────────────────────

const sourceRef = {
  source_type: z.enum(['Namespace', 'Project']),
  source_id: z.int(),
  user_id: z.int(),
};
const grant = { access_level: z.int(), expires_at: z.iso.date().nullable() };

export const memberEvents = {
  MemberAdded: z.strictObject({ ...sourceRef, ...grant, created_by_id: z.int().nullable() }),
  /** `previous_access_level`: the level before, which the audit shows (null in events stored before schema version 2). */
  MemberUpdated: z.strictObject({ ...sourceRef, ...grant, previous_access_level: z.int().nullable() }),
  /** `left`: the member removed themselves; `user_deleted`: the user account was deleted. */
  MemberRemoved: z.strictObject({ ...sourceRef, reason: z.enum(['removed', 'left', 'user_deleted']) }),
  AccessRequested: z.strictObject(sourceRef),
  AccessRequestApproved: z.strictObject({ ...sourceRef, ...grant, approved_by_id: z.int().nullable() }),
  /** `withdrawn`: the requester took the request back themselves. */
  AccessRequestDenied: z.strictObject({ ...sourceRef, withdrawn: z.boolean() }),
} satisfies EventSchemas;

export type MemberEvent = EventOf<typeof memberEvents>;

/** Schema version 2 of MemberUpdated added the level before the change; older events did not record it. */
export const memberUpcasters: Upcasters<typeof memberEvents> = {
  MemberUpdated: { 1: (data: object) => ({ ...data, previous_access_level: null }) },
};

// ───────────────────────────── State ─────────────────────────────

export interface MemberRecord {
  readonly user_id: number;
  readonly access_level: number;
  readonly expires_at: string | null;
}

/** A group ('Namespace') or project whose members a stream holds: the stream's key. */
export interface MemberSource {
  readonly type: MemberSourceType;
  readonly id: number;
}

export interface MembersState {
  readonly source: MemberSource;
  readonly members: ReadonlyMap<number, MemberRecord>;
  /** Pending access requests, by user id. */
  readonly requests: ReadonlySet<number>;
}

export const membersStreamId = (source: MemberSource) => `members-${source.type === 'Namespace' ? 'group' : 'project'}-${source.id}`;

// ───────────────────────────── Commands ─────────────────────────────

interface SourceCommand {
  readonly userId: number;
}

export type MemberCommand =
  | (SourceCommand & {
      readonly type: 'AddMember';
      readonly accessLevel: number;
      readonly expiresAt: string | null;
      readonly actorId: number | null;
      readonly inherited: InheritedMembership | null;
    })
  | (SourceCommand & {
      readonly type: 'UpdateMember';
      readonly accessLevel: number;
      /** undefined keeps the current date; null clears it. */
      readonly expiresAt: string | null | undefined;
      readonly guard: OwnerGuard;
      readonly inherited: InheritedMembership | null;
    })
  | (SourceCommand & { readonly type: 'RemoveMember'; readonly actorId: number | null; readonly guard: OwnerGuard })
  | (SourceCommand & { readonly type: 'RequestAccess' })
  | (SourceCommand & {
      readonly type: 'ApproveAccessRequest';
      readonly accessLevel: number;
      readonly actorId: number | null;
      readonly inherited: InheritedMembership | null;
    })
  | (SourceCommand & { readonly type: 'DenyAccessRequest'; readonly actorId: number | null });

/**
 * What the owner invariants need from outside the stream, read at command time.
 * GitLab counts the owners of the group and its ancestors whose accounts are active
 * (`members_with_parents.owners`), and a personal project's owner is untouchable.
 */
export interface OwnerGuard {
  /** Active owners of ancestor groups (0 for a top-level group or a project). */
  readonly ancestorOwners: number;
  /** Members of this source whose accounts are active (blocked and deleted users are not). */
  readonly activeUserIds: readonly number[];
  /** The owner of a project's personal namespace, whose membership cannot be changed. */
  readonly personalOwnerId: number | null;
}

/** The user's highest membership in an ancestor group (GitLab's `highest_group_member`). */
export interface InheritedMembership {
  readonly access_level: number;
  readonly group_name: string;
}

// ───────────────────────────── Validation ─────────────────────────────

export const DEFAULT_ACCESS_LEVEL = ACCESS.DEVELOPER;

/**
 * The first membership of a new source, committed with its creation: a group's creator as
 * owner, a personal project's namespace owner as maintainer. Nothing is inherited yet.
 */
export const firstMember = (userId: number, accessLevel: number, actorId: number | null): MemberCommand => ({
  type: 'AddMember',
  userId,
  accessLevel,
  expiresAt: null,
  actorId: actorId ?? userId,
  inherited: null,
});

/** GitLab: 50 is a group role; ProjectMember validates inclusion in Gitlab::Access.values. */
export function validLevels(sourceType: MemberSourceType): readonly number[] {
  return sourceType === 'Namespace' ? GROUP_ACCESS_LEVELS : PROJECT_ACCESS_LEVELS;
}

export const ROLE_NAMES: Readonly<Record<number, string>> = { 10: 'Guest', 20: 'Reporter', 30: 'Developer', 40: 'Maintainer', 50: 'Owner' };

/**
 * GitLab's Member validations, in their order: not below an inherited membership
 * (`higher_access_level_than_group`), then the level's inclusion in the source's list.
 */
function validateLevel(sourceType: MemberSourceType, level: number, inherited: InheritedMembership | null) {
  const messages: string[] = [];
  if (inherited && inherited.access_level > level) {
    const role = ROLE_NAMES[inherited.access_level] ?? String(inherited.access_level);
    messages.push(`should be greater than or equal to ${role} inherited membership from group ${inherited.group_name}`);
  }
  if (!validLevels(sourceType).includes(level)) messages.push('is not included in the list');
  if (messages.length > 0) throw invalid({ access_level: messages });
}

// ───────────────────────────── Decider ─────────────────────────────

// Only the key's type and id: a caller may pass a richer object (a resolved source).
const initialState = ({ type, id }: MemberSource): MembersState => ({ source: { type, id }, members: new Map(), requests: new Set() });

function evolve(state: MembersState, event: MemberEvent): MembersState {
  const { source } = state;
  const { user_id } = event.data;
  switch (event.type) {
    case 'MemberAdded':
    case 'MemberUpdated':
    case 'AccessRequestApproved': {
      const members = new Map(state.members);
      members.set(user_id, { user_id, access_level: event.data.access_level, expires_at: event.data.expires_at });
      const requests = new Set(state.requests);
      requests.delete(user_id);
      return { source, members, requests };
    }
    case 'MemberRemoved': {
      const members = new Map(state.members);
      members.delete(user_id);
      return { ...state, source, members };
    }
    case 'AccessRequested': {
      const requests = new Set(state.requests);
      requests.add(user_id);
      return { ...state, source, requests };
    }
    case 'AccessRequestDenied': {
      const requests = new Set(state.requests);
      requests.delete(user_id);
      return { ...state, source, requests };
    }
    default:
      return state;
  }
}

const ref = (state: MembersState, command: SourceCommand) => ({ source_type: state.source.type, source_id: state.source.id, user_id: command.userId });

/**
 * GitLab's GroupMemberPolicy `last_owner` (prevent_all): the only owner of a group, counting
 * the ancestors' owners, can be neither changed nor removed — 403, even for administrators.
 * ProjectMemberPolicy `target_is_owner` does the same for a personal project's owner.
 */
function assertNotProtected(state: MembersState, command: SourceCommand, member: MemberRecord, guard: OwnerGuard) {
  if (state.source.type === 'Project') {
    if (guard.personalOwnerId === member.user_id) throw forbidden();
    return;
  }
  if (member.access_level !== ACCESS.OWNER) return;
  const active = new Set(guard.activeUserIds);
  const otherOwners = [...state.members.values()].filter((m) => m.access_level === ACCESS.OWNER && m.user_id !== member.user_id && active.has(m.user_id)).length;
  if (otherOwners + guard.ancestorOwners === 0) throw forbidden();
}

function decide(command: MemberCommand, state: MembersState): MemberEvent[] {
  const data = ref(state, command);
  const member = state.members.get(command.userId);
  const requested = state.requests.has(command.userId);
  switch (command.type) {
    case 'AddMember': {
      if (member) throw conflict('Member already exists');
      validateLevel(state.source.type, command.accessLevel, command.inherited);
      // GitLab: Member.add_user on a pending requester approves the request.
      if (requested) {
        return [{ type: 'AccessRequestApproved', data: { ...data, access_level: command.accessLevel, expires_at: command.expiresAt, approved_by_id: command.actorId } }];
      }
      return [{ type: 'MemberAdded', data: { ...data, access_level: command.accessLevel, expires_at: command.expiresAt, created_by_id: command.actorId } }];
    }
    case 'UpdateMember': {
      if (!member) throw recordNotFound();
      assertNotProtected(state, command, member, command.guard);
      validateLevel(state.source.type, command.accessLevel, command.inherited);
      const expiresAt = command.expiresAt === undefined ? member.expires_at : command.expiresAt;
      if (expiresAt === member.expires_at && command.accessLevel === member.access_level) return [];
      return [{ type: 'MemberUpdated', data: { ...data, access_level: command.accessLevel, expires_at: expiresAt, previous_access_level: member.access_level } }];
    }
    case 'RemoveMember': {
      if (!member) throw recordNotFound();
      assertNotProtected(state, command, member, command.guard);
      return [{ type: 'MemberRemoved', data: { ...data, reason: command.actorId === command.userId ? 'left' : 'removed' } }];
    }
    case 'RequestAccess':
      // GitLab: the request_access ability is prevented for anybody with access already.
      if (member) throw forbidden();
      // GitLab: members.create fails the uniqueness validation of user_id.
      if (requested) throw invalid({ user_id: ['already exists in source'] });
      return [{ type: 'AccessRequested', data }];
    case 'ApproveAccessRequest':
      if (!requested) throw recordNotFound();
      validateLevel(state.source.type, command.accessLevel, command.inherited);
      return [{ type: 'AccessRequestApproved', data: { ...data, access_level: command.accessLevel, expires_at: null, approved_by_id: command.actorId } }];
    case 'DenyAccessRequest':
      if (!requested) throw recordNotFound();
      return [{ type: 'AccessRequestDenied', data: { ...data, withdrawn: command.actorId === command.userId } }];
    default:
      return unhandled(command);
  }
}

export const membersDecider: Decider<MemberCommand, MemberEvent, MembersState, MemberSource> = { initialState, evolve, decide };

// ───────────────────────────── Feed index ─────────────────────────────

export function memberEventIndex(event: MemberEvent) {
  const { source_type, source_id, user_id } = event.data;
  return {
    ...(source_type === 'Namespace' ? { groupId: source_id } : { projectId: source_id }),
    targetType: 'User',
    targetId: user_id,
  };
}

// ───────────────────────────── The aggregate ─────────────────────────────

/** The members and access requests of one group or project (src/domain/members.ts). */
export const members = defineAggregate({
  name: 'members',
  streamId: membersStreamId,
  events: memberEvents,
  decider: membersDecider,
  index: memberEventIndex,
  upcasters: memberUpcasters,
});
