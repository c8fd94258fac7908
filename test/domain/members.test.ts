import { describe, expect, it } from 'vitest';
import {
  type MemberCommand,
  type MemberEvent,
  type MemberSource,
  type OwnerGuard,
  memberEventIndex,
  membersDecider,
  membersStreamId,
} from '../../src/domain/members.js';
import { deciderSpec, rejected } from '../support/decider.js';

// ───────────────────────────── given / when / then ─────────────────────────────

const { on } = deciderSpec(membersDecider);

const G: MemberSource = { type: 'Namespace', id: 7 };
const P: MemberSource = { type: 'Project', id: 9 };
const ref = (src: MemberSource, user_id: number) => ({ source_type: src.type, source_id: src.id, user_id });
const added = (src: MemberSource, user_id: number, access_level: number, expires_at: string | null = null): MemberEvent => ({
  type: 'MemberAdded',
  data: { ...ref(src, user_id), access_level, expires_at, created_by_id: 1 },
});
const requested = (src: MemberSource, user_id: number): MemberEvent => ({ type: 'AccessRequested', data: ref(src, user_id) });
const guard = (overrides: Partial<OwnerGuard> = {}): OwnerGuard => ({ ancestorOwners: 0, activeUserIds: [1, 2, 3, 4, 5], personalOwnerId: null, ...overrides });

const add = (userId: number, accessLevel: number, extra: Partial<MemberCommand> = {}): MemberCommand =>
  ({ type: 'AddMember', userId, accessLevel, expiresAt: null, actorId: 1, inherited: null, ...extra }) as MemberCommand;
const update = (userId: number, accessLevel: number, extra: Partial<MemberCommand> = {}): MemberCommand =>
  ({ type: 'UpdateMember', userId, accessLevel, expiresAt: undefined, guard: guard(), inherited: null, ...extra }) as MemberCommand;
const remove = (userId: number, extra: Partial<MemberCommand> = {}): MemberCommand =>
  ({ type: 'RemoveMember', userId, actorId: 1, guard: guard(), ...extra }) as MemberCommand;

// ───────────────────────────── Members ─────────────────────────────

describe('members decider', () => {
  it('names one stream per group or project', () => {
    expect(membersStreamId(G)).toBe('members-group-7');
    expect(membersStreamId(P)).toBe('members-project-9');
  });

  describe('AddMember', () => {
    it('adds a member at the given level', () => {
      on(G).given().when(add(2, 30, { expiresAt: '2030-01-01' } as Partial<MemberCommand>)).then([
        { type: 'MemberAdded', data: { ...ref(G, 2), access_level: 30, expires_at: '2030-01-01', created_by_id: 1 } },
      ]);
    });

    it('refuses an existing member with 409 "Member already exists"', () => {
      on(G).given(added(G, 2, 30)).when(add(2, 40)).then(rejected('conflict', { text: 'Member already exists' }));
    });

    it('adds owners to groups, not to projects (GitLab: access_level is not included in the list)', () => {
      on(G).given().when(add(2, 50)).then([added(G, 2, 50)]);
      on(P).given().when(add(2, 50)).then(rejected('invalid', { fields: { access_level: ['is not included in the list'] } }));
    });

    it.each([0, 5, 15, 60, -10])('refuses the invalid level %i', (level) => {
      on(G).given().when(add(2, level)).then(rejected('invalid', { fields: { access_level: ['is not included in the list'] } }));
    });

    it('refuses a level below an inherited membership (GitLab: higher_access_level_than_group)', () => {
      on(G).given()
        .when(add(2, 20, { inherited: { access_level: 30, group_name: 'Parent' } } as Partial<MemberCommand>))
        .then(rejected('invalid', { fields: {
          access_level: ['should be greater than or equal to Developer inherited membership from group Parent'],
        } }));
      on(G).given().when(add(2, 30, { inherited: { access_level: 30, group_name: 'Parent' } } as Partial<MemberCommand>)).then([added(G, 2, 30)]);
    });

    it('approves a pending access request instead (GitLab: Member.add_user on a requester)', () => {
      on(G).given(requested(G, 3)).when(add(3, 40)).then([
        { type: 'AccessRequestApproved', data: { ...ref(G, 3), access_level: 40, expires_at: null, approved_by_id: 1 } },
      ]);
    });
  });

  describe('UpdateMember', () => {
    it('changes the level and keeps the expiry unless given', () => {
      on(P).given(added(P, 2, 30, '2030-01-01')).when(update(2, 40)).then([
        { type: 'MemberUpdated', data: { ...ref(P, 2), access_level: 40, expires_at: '2030-01-01', previous_access_level: 30 } },
      ]);
      on(P).given(added(P, 2, 30, '2030-01-01')).when(update(2, 30, { expiresAt: null } as Partial<MemberCommand>)).then([
        { type: 'MemberUpdated', data: { ...ref(P, 2), access_level: 30, expires_at: null, previous_access_level: 30 } },
      ]);
    });

    it('appends nothing when nothing changes', () => {
      on(P).given(added(P, 2, 30)).when(update(2, 30)).then([]);
    });

    it('is 404 "Not found" for a non-member', () => {
      on(P).given(added(P, 2, 30)).when(update(3, 30)).then(rejected('not_found', { record: true }));
    });

    it('refuses to demote the last owner of a group (403)', () => {
      on(G).given(added(G, 1, 50), added(G, 2, 30)).when(update(1, 40)).then(rejected('forbidden', { subject: undefined }));
    });

    it('demotes an owner when another active owner remains, here or in an ancestor', () => {
      on(G).given(added(G, 1, 50), added(G, 2, 50)).when(update(1, 40)).then([{ type: 'MemberUpdated', data: { ...ref(G, 1), access_level: 40, expires_at: null, previous_access_level: 50 } }]);
      on(G).given(added(G, 1, 50)).when(update(1, 40, { guard: guard({ ancestorOwners: 1 }) } as Partial<MemberCommand>)).then([
        { type: 'MemberUpdated', data: { ...ref(G, 1), access_level: 40, expires_at: null, previous_access_level: 50 } },
      ]);
    });

    it('does not count blocked or deleted owners', () => {
      on(G).given(added(G, 1, 50), added(G, 2, 50))
        .when(update(1, 40, { guard: guard({ activeUserIds: [1] }) } as Partial<MemberCommand>))
        .then(rejected('forbidden', { subject: undefined }));
    });

    it("refuses to change a personal project's owner (GitLab: target_is_owner)", () => {
      on(P).given(added(P, 4, 40)).when(update(4, 30, { guard: guard({ personalOwnerId: 4 }) } as Partial<MemberCommand>)).then(rejected('forbidden', { subject: undefined }));
    });

    it('validates the new level', () => {
      on(P).given(added(P, 2, 30)).when(update(2, 50)).then(rejected('invalid', { fields: { access_level: ['is not included in the list'] } }));
    });
  });

  describe('RemoveMember', () => {
    it('removes a member; a member removing themselves has left', () => {
      on(G).given(added(G, 1, 50), added(G, 2, 30)).when(remove(2)).then([{ type: 'MemberRemoved', data: { ...ref(G, 2), reason: 'removed' } }]);
      on(G).given(added(G, 1, 50), added(G, 2, 30)).when(remove(2, { actorId: 2 } as Partial<MemberCommand>)).then([
        { type: 'MemberRemoved', data: { ...ref(G, 2), reason: 'left' } },
      ]);
    });

    it('refuses to remove the last owner (403), even when they leave themselves', () => {
      on(G).given(added(G, 1, 50)).when(remove(1, { actorId: 1 } as Partial<MemberCommand>)).then(rejected('forbidden', { subject: undefined }));
    });

    it('removes a subgroup owner while an ancestor keeps an owner', () => {
      on(G).given(added(G, 1, 50)).when(remove(1, { actorId: 3, guard: guard({ ancestorOwners: 1 }) } as Partial<MemberCommand>)).then([
        { type: 'MemberRemoved', data: { ...ref(G, 1), reason: 'removed' } },
      ]);
    });

    it('is 404 for a non-member, also after removal', () => {
      on(G).given(added(G, 1, 50), added(G, 2, 30), { type: 'MemberRemoved', data: { ...ref(G, 2), reason: 'removed' } })
        .when(remove(2))
        .then(rejected('not_found', { record: true }));
    });
  });

  // ───────────────────────────── Access requests ─────────────────────────────

  describe('access requests', () => {
    const request = (userId: number): MemberCommand => ({ type: 'RequestAccess', userId });
    const approve = (userId: number, accessLevel = 30): MemberCommand => ({ type: 'ApproveAccessRequest', userId, accessLevel, actorId: 1, inherited: null });
    const deny = (userId: number, actorId = 1): MemberCommand => ({ type: 'DenyAccessRequest', userId, actorId });

    it('records a request', () => {
      on(P).given(added(P, 1, 40)).when(request(5)).then([requested(P, 5)]);
    });

    it('refuses members with 403 and pending requesters with the uniqueness error', () => {
      on(P).given(added(P, 5, 20)).when(request(5)).then(rejected('forbidden', { subject: undefined }));
      on(P).given(requested(P, 5)).when(request(5)).then(rejected('invalid', { fields: { user_id: ['already exists in source'] } }));
    });

    it('approves at the given level, and the requester becomes a member', () => {
      const events = [requested(G, 5)];
      on(G).given(...events).when(approve(5, 20)).then([
        { type: 'AccessRequestApproved', data: { ...ref(G, 5), access_level: 20, expires_at: null, approved_by_id: 1 } },
      ]);
      const approved: MemberEvent = { type: 'AccessRequestApproved', data: { ...ref(G, 5), access_level: 20, expires_at: null, approved_by_id: 1 } };
      on(G).given(requested(G, 5), approved).when(add(5, 30)).then(rejected('conflict', { text: 'Member already exists' }));
      on(G).given(requested(G, 5), approved).when(approve(5)).then(rejected('not_found', { record: true }));
    });

    it('validates the approved level', () => {
      on(P).given(requested(P, 5)).when(approve(5, 50)).then(rejected('invalid', { fields: { access_level: ['is not included in the list'] } }));
    });

    it('denies, or records a withdrawal when the requester takes it back', () => {
      on(P).given(requested(P, 5)).when(deny(5)).then([{ type: 'AccessRequestDenied', data: { ...ref(P, 5), withdrawn: false } }]);
      on(P).given(requested(P, 5)).when(deny(5, 5)).then([{ type: 'AccessRequestDenied', data: { ...ref(P, 5), withdrawn: true } }]);
      on(P).given(requested(P, 5), { type: 'AccessRequestDenied', data: { ...ref(P, 5), withdrawn: true } }).when(deny(5)).then(rejected('not_found', { record: true }));
    });
  });
});

// ───────────────────────────── Feed index ─────────────────────────────

describe('member feed index', () => {
  it('indexes events by group or project and target user', () => {
    expect(memberEventIndex(added(G, 2, 30))).toEqual({ groupId: 7, targetType: 'User', targetId: 2 });
    expect(memberEventIndex(added(P, 2, 30))).toEqual({ projectId: 9, targetType: 'User', targetId: 2 });
  });
});
