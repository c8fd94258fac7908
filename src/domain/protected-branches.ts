import { z } from 'zod';
import { type ClaimChanges, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import type { EventOf, EventSchemas } from './events.js';
import { ACCESS } from './access.js';
import { conflict, invalid, recordNotFound } from './errors.js';
import { defineAggregate } from './aggregate.js';

/**
 * Protected branches of a project (GitLab's ProtectedBranch with its push, merge and
 * unprotect access levels): one aggregate per protected branch, stream
 * `protected-branch-<id>`; its (project, name) is a uniqueness claim.
 */

// ───────────────────────────── Access levels ─────────────────────────────

/** GitLab's Gitlab::Access::NO_ACCESS and ADMIN, beside the member roles. */
export const PROTECTED_ACCESS = { NO_ACCESS: 0, DEVELOPER: ACCESS.DEVELOPER, MAINTAINER: ACCESS.MAINTAINER, ADMIN: 60 } as const;

/** ProtectedRefAccess.allowed_access_levels. */
export const PROTECTED_REF_LEVELS = [0, 30, 40, 60] as const;

/** The kinds of rule, in the order GitLab validates them (merge, push, then EE's unprotect). */
export const ACCESS_KINDS = ['merge', 'push', 'unprotect'] as const;
export type AccessKind = (typeof ACCESS_KINDS)[number];

/** ProtectedRefAccess#humanize for a role. */
export const HUMAN_ACCESS_LEVELS: Readonly<Record<number, string>> = { 0: 'No one', 30: 'Developers + Maintainers', 40: 'Maintainers', 60: 'Admin' };

// ───────────────────────────── Events ─────────────────────────────

/** One rule: a role (user_id and group_id null), a user or a group. A user or group rule keeps the column's default level (40). */
const rule = z.strictObject({ access_level: z.int(), user_id: z.int().nullable(), group_id: z.int().nullable() });
export type AccessRule = z.output<typeof rule>;

const ofBranch = { id: z.int(), project_id: z.int() };

export const protectedBranchEvents = {
  ProtectedBranchCreated: z.strictObject({
    ...ofBranch,
    name: z.string(),
    merge_access_levels: z.array(rule),
    push_access_levels: z.array(rule),
    unprotect_access_levels: z.array(rule),
    code_owner_approval_required: z.boolean(),
  }),
  ProtectedBranchUpdated: z.strictObject({ ...ofBranch, code_owner_approval_required: z.boolean() }),
  ProtectedBranchDeleted: z.strictObject({ ...ofBranch, name: z.string() }),
} satisfies EventSchemas;

export type ProtectedBranchEvent = EventOf<typeof protectedBranchEvents>;

// ───────────────────────────── State ─────────────────────────────

export interface ProtectedBranchState {
  readonly id: number;
  /** null: not protected (never, or unprotected). */
  readonly project_id: number | null;
  readonly name: string | null;
  readonly code_owner_approval_required: boolean;
}

export const protectedBranchStreamId = (id: number) => `protected-branch-${id}`;

// ───────────────────────────── Commands ─────────────────────────────

/** One element of `allowed_to_<kind>`: exactly one of its keys. */
export interface RuleInput {
  readonly access_level?: number | undefined;
  readonly user_id?: number | undefined;
  readonly group_id?: number | undefined;
}

/** `<kind>_access_level` and `allowed_to_<kind>` of one kind. */
export interface AccessInput {
  readonly level: number | undefined;
  readonly allowed: readonly RuleInput[];
}

/** Facts read at command time about the users and groups the rules name. */
export interface RuleFacts {
  /** Users who are members of the project (GitLab's project.team.member?). */
  readonly memberUserIds: readonly number[];
  /** Groups the project is shared with (project_group_links). */
  readonly sharedGroupIds: readonly number[];
}

export type ProtectedBranchCommand =
  | {
      readonly type: 'ProtectBranch';
      readonly projectId: number;
      readonly name: string;
      readonly access: Readonly<Record<AccessKind, AccessInput>>;
      readonly codeOwnerApprovalRequired: boolean;
      readonly facts: RuleFacts;
    }
  | { readonly type: 'UpdateProtectedBranch'; readonly codeOwnerApprovalRequired: boolean }
  | { readonly type: 'UnprotectBranch' };

// ───────────────────────────── Validation ─────────────────────────────

/**
 * GitLab's ProtectedBranches::AccessLevelParams: `<kind>_access_level`, defaulting to
 * maintainers unless `allowed_to_<kind>` names rules, then those rules.
 */
export function requestedRules({ level, allowed }: AccessInput): readonly RuleInput[] {
  const role = level ?? (allowed.length === 0 ? PROTECTED_ACCESS.MAINTAINER : undefined);
  return role === undefined ? allowed : [{ access_level: role }, ...allowed];
}

type Errors = Record<string, string[]>;
const add = (errors: Errors, field: string, message: string) => (errors[field] ??= []).push(message);

/**
 * The rules of one kind, validated as GitLab's ProtectedRefAccess validates each record
 * (errors on `<kind>_access_levels.<attribute>`): a role in the allowed list, a user who is
 * a member, a group the project is shared with, each once.
 */
function rulesOf(kind: AccessKind, input: AccessInput, facts: RuleFacts, errors: Errors): AccessRule[] {
  const field = (attribute: string) => `${kind}_access_levels.${attribute}`;
  const seen = new Set<string>();
  const once = (key: string, attribute: string) => {
    if (seen.has(key)) add(errors, field(attribute), 'has already been taken');
    seen.add(key);
  };
  const rules: AccessRule[] = [];
  for (const given of requestedRules(input)) {
    const named = [given.access_level, given.user_id, given.group_id].filter((v) => v !== undefined).length;
    if (named !== 1) {
      add(errors, `allowed_to_${kind}`, 'must name exactly one of access_level, user_id and group_id');
    } else if (given.user_id !== undefined) {
      if (!facts.memberUserIds.includes(given.user_id)) add(errors, field('user'), 'is not a member of the project');
      once(`user:${given.user_id}`, 'user_id');
      rules.push({ access_level: PROTECTED_ACCESS.MAINTAINER, user_id: given.user_id, group_id: null });
    } else if (given.group_id !== undefined) {
      if (!facts.sharedGroupIds.includes(given.group_id)) add(errors, field('group'), 'does not have access to the project');
      once(`group:${given.group_id}`, 'group_id');
      rules.push({ access_level: PROTECTED_ACCESS.MAINTAINER, user_id: null, group_id: given.group_id });
    } else {
      const level = given.access_level!;
      if (!(PROTECTED_REF_LEVELS as readonly number[]).includes(level)) add(errors, field('access_level'), 'is not included in the list');
      once(`role:${level}`, 'access_level');
      rules.push({ access_level: level, user_id: null, group_id: null });
    }
  }
  return rules;
}

// ───────────────────────────── Decider ─────────────────────────────

const initialState = (id: number): ProtectedBranchState => ({ id, project_id: null, name: null, code_owner_approval_required: false });

function evolve(state: ProtectedBranchState, event: ProtectedBranchEvent): ProtectedBranchState {
  switch (event.type) {
    case 'ProtectedBranchCreated':
      return { ...state, project_id: event.data.project_id, name: event.data.name, code_owner_approval_required: event.data.code_owner_approval_required };
    case 'ProtectedBranchUpdated':
      return { ...state, code_owner_approval_required: event.data.code_owner_approval_required };
    case 'ProtectedBranchDeleted':
      return initialState(state.id);
    default:
      return state;
  }
}

export const alreadyProtected = (name: string) => `Protected branch '${name}' already exists`;

function decide(command: ProtectedBranchCommand, state: ProtectedBranchState): ProtectedBranchEvent[] {
  const { id, project_id } = state;
  switch (command.type) {
    case 'ProtectBranch': {
      if (project_id !== null) throw conflict(alreadyProtected(command.name));
      const errors: Errors = {};
      // ProtectedRef: `validates :name, presence: true`.
      if (command.name.trim() === '') add(errors, 'name', "can't be blank");
      const [merge, push, unprotect] = ACCESS_KINDS.map((kind) => rulesOf(kind, command.access[kind], command.facts, errors)) as [AccessRule[], AccessRule[], AccessRule[]];
      if (Object.keys(errors).length > 0) throw invalid(errors);
      return [
        {
          type: 'ProtectedBranchCreated',
          data: {
            id,
            project_id: command.projectId,
            name: command.name,
            merge_access_levels: merge,
            push_access_levels: push,
            unprotect_access_levels: unprotect,
            code_owner_approval_required: command.codeOwnerApprovalRequired,
          },
        },
      ];
    }
    case 'UpdateProtectedBranch':
      if (project_id === null) throw recordNotFound('ProtectedBranch');
      if (command.codeOwnerApprovalRequired === state.code_owner_approval_required) return [];
      return [{ type: 'ProtectedBranchUpdated', data: { id, project_id, code_owner_approval_required: command.codeOwnerApprovalRequired } }];
    case 'UnprotectBranch':
      if (project_id === null || state.name === null) throw recordNotFound('ProtectedBranch');
      return [{ type: 'ProtectedBranchDeleted', data: { id, project_id, name: state.name } }];
    default:
      return unhandled(command);
  }
}

export const protectedBranchDecider: Decider<ProtectedBranchCommand, ProtectedBranchEvent, ProtectedBranchState, number> = { initialState, evolve, decide };

// ───────────────────────────── Claims and feed ─────────────────────────────

/** A branch name is protected once per project (exact: git branch names are case-sensitive). */
export const protectedBranchClaim = (projectId: number, name: string) => ({ kind: 'protected_branch', key: `${projectId}/${name}`, conflictMessage: alreadyProtected(name) });

export function protectedBranchClaims(event: ProtectedBranchEvent, before: ProtectedBranchState): ClaimChanges {
  switch (event.type) {
    case 'ProtectedBranchCreated':
      return { acquire: [protectedBranchClaim(event.data.project_id, event.data.name)], release: [] };
    case 'ProtectedBranchDeleted':
      return { acquire: [], release: [protectedBranchClaim(event.data.project_id, before.name ?? event.data.name)] };
    default:
      return NO_CLAIMS;
  }
}

export const protectedBranchEventIndex = (event: ProtectedBranchEvent) => ({ projectId: event.data.project_id, targetType: 'ProtectedBranch', targetId: event.data.id });

// ───────────────────────────── The aggregate ─────────────────────────────

/** One protected branch of a project (src/domain/protected-branches.ts). */
export const protectedBranches = defineAggregate({
  name: 'protected_branches',
  streamId: protectedBranchStreamId,
  events: protectedBranchEvents,
  decider: protectedBranchDecider,
  claims: protectedBranchClaims,
  index: protectedBranchEventIndex,
  idSequence: 'protected_branches_id_seq',
});
