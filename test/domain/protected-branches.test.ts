import { describe, expect, it } from 'vitest';
import {
  type AccessInput,
  type AccessKind,
  type AccessRule,
  type ProtectedBranchCommand,
  type ProtectedBranchEvent,
  protectedBranchClaims,
  protectedBranchDecider,
  protectedBranchEventIndex,
  protectedBranchStreamId,
  requestedRules,
} from '../../src/domain/protected-branches.js';
import { deciderSpec, rejected } from '../support/decider.js';

const { on } = deciderSpec(protectedBranchDecider);

const ID = 5;
const PROJECT = 9;
const none: AccessInput = { level: undefined, allowed: [] };
const role = (access_level: number): AccessRule => ({ access_level, user_id: null, group_id: null });
const facts = { memberUserIds: [2], sharedGroupIds: [7] };

const protect = (access: Partial<Record<AccessKind, AccessInput>> = {}, extra: Partial<Extract<ProtectedBranchCommand, { type: 'ProtectBranch' }>> = {}): ProtectedBranchCommand => ({
  type: 'ProtectBranch',
  projectId: PROJECT,
  name: 'release/*',
  access: { merge: none, push: none, unprotect: none, ...access },
  codeOwnerApprovalRequired: false,
  facts,
  ...extra,
});

const created = (rules: Partial<Record<`${AccessKind}_access_levels`, AccessRule[]>> = {}, code_owner_approval_required = false): ProtectedBranchEvent => ({
  type: 'ProtectedBranchCreated',
  data: {
    id: ID,
    project_id: PROJECT,
    name: 'release/*',
    merge_access_levels: [role(40)],
    push_access_levels: [role(40)],
    unprotect_access_levels: [role(40)],
    ...rules,
    code_owner_approval_required,
  },
});

describe('protected branches decider', () => {
  it('names one stream per protected branch, indexed by its project', () => {
    expect(protectedBranchStreamId(ID)).toBe('protected-branch-5');
    expect(protectedBranchEventIndex(created())).toEqual({ projectId: PROJECT, targetType: 'ProtectedBranch', targetId: ID });
  });

  describe('ProtectBranch', () => {
    it('defaults every kind to maintainers (40)', () => {
      on(ID).given().when(protect()).then([created()]);
    });

    it.each([0, 30, 40, 60])('takes the allowed level %i', (level) => {
      on(ID)
        .given()
        .when(protect({ push: { level, allowed: [] }, merge: { level, allowed: [] } }))
        .then([created({ push_access_levels: [role(level)], merge_access_levels: [role(level)] })]);
    });

    it.each([10, 20, 50, -1])('refuses the level %i (GitLab: access_level is not included in the list)', (level) => {
      on(ID)
        .given()
        .when(protect({ push: { level, allowed: [] } }))
        .then(rejected('invalid', { fields: { 'push_access_levels.access_level': ['is not included in the list'] } }));
    });

    it('keeps the role default only when no rules are named (AccessLevelParams)', () => {
      expect(requestedRules({ level: undefined, allowed: [] })).toEqual([{ access_level: 40 }]);
      expect(requestedRules({ level: undefined, allowed: [{ user_id: 2 }] })).toEqual([{ user_id: 2 }]);
      expect(requestedRules({ level: 30, allowed: [{ user_id: 2 }] })).toEqual([{ access_level: 30 }, { user_id: 2 }]);
    });

    it('takes rules for a member user and a shared group, at the column default 40', () => {
      on(ID)
        .given()
        .when(protect({ push: { level: undefined, allowed: [{ user_id: 2 }] }, merge: { level: undefined, allowed: [{ group_id: 7 }, { access_level: 30 }] } }))
        .then([
          created({
            push_access_levels: [{ access_level: 40, user_id: 2, group_id: null }],
            merge_access_levels: [
              { access_level: 40, user_id: null, group_id: 7 },
              { access_level: 30, user_id: null, group_id: null },
            ],
          }),
        ]);
    });

    it('refuses a user who is not a member and a group the project is not shared with, merge first', () => {
      on(ID)
        .given()
        .when(protect({ push: { level: undefined, allowed: [{ user_id: 3 }] }, merge: { level: undefined, allowed: [{ group_id: 8 }] } }))
        .then(
          rejected('invalid', {
            fields: { 'merge_access_levels.group': ['does not have access to the project'], 'push_access_levels.user': ['is not a member of the project'] },
          }),
        );
    });

    it.each([[{}], [{ user_id: 2, access_level: 40 }], [{ user_id: 2, group_id: 7 }]])('refuses a rule that does not name exactly one of user_id, group_id, access_level: %j', (rule) => {
      on(ID)
        .given()
        .when(protect({ unprotect: { level: undefined, allowed: [rule] } }))
        .then(rejected('invalid', { fields: { allowed_to_unprotect: ['must name exactly one of access_level, user_id and group_id'] } }));
    });

    it('refuses the same user twice in one kind (GitLab: user_id has already been taken)', () => {
      on(ID)
        .given()
        .when(protect({ push: { level: undefined, allowed: [{ user_id: 2 }, { user_id: 2 }] } }))
        .then(rejected('invalid', { fields: { 'push_access_levels.user_id': ['has already been taken'] } }));
    });

    it("refuses a blank name (GitLab: name can't be blank)", () => {
      on(ID)
        .given()
        .when(protect({}, { name: '  ' }))
        .then(rejected('invalid', { fields: { name: ["can't be blank"] } }));
    });

    it('records code owners approval as decided by the caller', () => {
      on(ID)
        .given()
        .when(protect({}, { codeOwnerApprovalRequired: true }))
        .then([created({}, true)]);
    });

    it("refuses a stream already protected with 409 \"Protected branch '<name>' already exists\"", () => {
      on(ID)
        .given(created())
        .when(protect())
        .then(rejected('conflict', { text: "Protected branch 'release/*' already exists" }));
    });

    it('claims the name in its project, and gives it back when unprotected', () => {
      const state = on(ID).given().state;
      expect(protectedBranchClaims(created(), state).acquire).toEqual([{ kind: 'protected_branch', key: '9/release/*', conflictMessage: "Protected branch 'release/*' already exists" }]);
      const protectedState = on(ID).given(created()).state;
      const deleted: ProtectedBranchEvent = { type: 'ProtectedBranchDeleted', data: { id: ID, project_id: PROJECT, name: 'release/*' } };
      expect(protectedBranchClaims(deleted, protectedState)).toEqual({ acquire: [], release: [{ kind: 'protected_branch', key: '9/release/*', conflictMessage: "Protected branch 'release/*' already exists" }] });
    });
  });

  describe('UpdateProtectedBranch', () => {
    it('sets code owners approval, and appends nothing when unchanged', () => {
      on(ID)
        .given(created())
        .when({ type: 'UpdateProtectedBranch', codeOwnerApprovalRequired: true })
        .then([{ type: 'ProtectedBranchUpdated', data: { id: ID, project_id: PROJECT, code_owner_approval_required: true } }]);
      on(ID).given(created()).when({ type: 'UpdateProtectedBranch', codeOwnerApprovalRequired: false }).then([]);
    });

    it('refuses an unknown protected branch (404 Not found)', () => {
      on(ID).given().when({ type: 'UpdateProtectedBranch', codeOwnerApprovalRequired: true }).then(rejected('not_found', { record: true }));
    });
  });

  describe('UnprotectBranch', () => {
    it('unprotects, once', () => {
      const deleted: ProtectedBranchEvent = { type: 'ProtectedBranchDeleted', data: { id: ID, project_id: PROJECT, name: 'release/*' } };
      on(ID).given(created()).when({ type: 'UnprotectBranch' }).then([deleted]);
      on(ID).given(created(), deleted).when({ type: 'UnprotectBranch' }).then(rejected('not_found', { record: true }));
    });
  });
});
