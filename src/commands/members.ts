import type { MemberSourceType } from '../domain/access.js';
import {
  type MemberCommand,
  type MemberEvent,
  type MembersState,
  type InheritedMembership,
  type OwnerGuard,
  memberEventIndex,
  membersDecider,
  membersStreamId,
} from '../domain/members.js';
import type { EventMetadata } from '../eventstore/types.js';
import { type CommandContext, type CommandResult, type CommandSpec, handleCommand } from './handler.js';

export type MemberCommandSpec = CommandSpec<MemberCommand, MemberEvent, MembersState>;

function spec(command: MemberCommand, metadata: EventMetadata): MemberCommandSpec {
  return {
    streamId: membersStreamId(command.sourceType, command.sourceId),
    decider: membersDecider,
    command,
    metadata,
    index: memberEventIndex,
  };
}

const run = (ctx: CommandContext, command: MemberCommand, metadata: EventMetadata): Promise<CommandResult<MembersState>> =>
  handleCommand(ctx, spec(command, metadata));

export interface Source {
  readonly type: MemberSourceType;
  readonly id: number;
}

/**
 * The first membership of a new group (owner) or project, as a command spec to commit
 * atomically with the creation: `handleCommands(ctx, [createSpec, initialMemberSpec(…)])`.
 */
export function initialMemberSpec(
  sourceType: MemberSourceType,
  sourceId: number,
  userId: number,
  accessLevel: number,
  metadata: EventMetadata,
): MemberCommandSpec {
  return spec({ type: 'AddMember', sourceType, sourceId, userId, accessLevel, expiresAt: null, actorId: metadata.actor_id ?? userId, inherited: null }, metadata);
}

/** `inherited`: the user's highest membership in an ancestor group (read by the caller). */
export function addMember(
  ctx: CommandContext,
  source: Source,
  userId: number,
  accessLevel: number,
  expiresAt: string | null,
  metadata: EventMetadata,
  inherited: InheritedMembership | null = null,
) {
  return run(ctx, { type: 'AddMember', sourceType: source.type, sourceId: source.id, userId, accessLevel, expiresAt, inherited, actorId: metadata.actor_id ?? null }, metadata);
}

export function updateMember(
  ctx: CommandContext,
  source: Source,
  userId: number,
  change: { accessLevel: number; expiresAt: string | null | undefined; inherited: InheritedMembership | null },
  guard: OwnerGuard,
  metadata: EventMetadata,
) {
  return run(ctx, { type: 'UpdateMember', sourceType: source.type, sourceId: source.id, userId, ...change, guard }, metadata);
}

export function removeMember(ctx: CommandContext, source: Source, userId: number, guard: OwnerGuard, metadata: EventMetadata) {
  return run(ctx, { type: 'RemoveMember', sourceType: source.type, sourceId: source.id, userId, actorId: metadata.actor_id ?? null, guard }, metadata);
}

export function requestAccess(ctx: CommandContext, source: Source, userId: number, metadata: EventMetadata) {
  return run(ctx, { type: 'RequestAccess', sourceType: source.type, sourceId: source.id, userId }, metadata);
}

export function approveAccessRequest(
  ctx: CommandContext,
  source: Source,
  userId: number,
  approval: { accessLevel: number; inherited: InheritedMembership | null },
  metadata: EventMetadata,
) {
  return run(ctx, { type: 'ApproveAccessRequest', sourceType: source.type, sourceId: source.id, userId, ...approval, actorId: metadata.actor_id ?? null }, metadata);
}

export function denyAccessRequest(ctx: CommandContext, source: Source, userId: number, metadata: EventMetadata) {
  return run(ctx, { type: 'DenyAccessRequest', sourceType: source.type, sourceId: source.id, userId, actorId: metadata.actor_id ?? null }, metadata);
}
