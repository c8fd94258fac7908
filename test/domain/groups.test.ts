import { describe, expect, it } from 'vitest';
import { groupClaims } from '../../src/domain/groups/claims.js';
import { type GroupCommand, groupDecider } from '../../src/domain/groups/decider.js';
import type { GroupEvent } from '../../src/domain/groups/events.js';
import type { GroupSettings, ParentGroup } from '../../src/domain/groups/settings.js';
import { deciderSpec, rejected } from '../support/decider.js';

// given events / when command / then events or error — no database.

const settings = (overrides: Partial<GroupSettings> = {}): GroupSettings => ({
  name: 'Acme',
  path: 'acme',
  description: '',
  visibility: 'private',
  share_with_group_lock: false,
  require_two_factor_authentication: false,
  two_factor_grace_period: 48,
  project_creation_level: 'developer',
  auto_devops_enabled: null,
  subgroup_creation_level: 'maintainer',
  emails_disabled: null,
  mentions_disabled: null,
  lfs_enabled: true,
  request_access_enabled: true,
  file_template_project_id: null,
  shared_runners_minutes_limit: null,
  extra_shared_runners_minutes_limit: null,
  ...overrides,
});

const parent = (overrides: Partial<ParentGroup> = {}): ParentGroup => ({
  id: 1,
  visibility: 'internal',
  full_path: 'acme',
  full_name: 'Acme',
  traversal_ids: [1],
  share_with_group_lock: false,
  ...overrides,
});

const { on } = deciderSpec(groupDecider);
/** The stream of group 2, the id every group below has unless said otherwise. */
const given = (...history: GroupEvent[]) => on(2).given(...history);

const created = (s = settings(), p: ParentGroup | null = null, id = 2): GroupEvent => ({
  type: 'GroupCreated',
  data: {
    id,
    parent_id: p?.id ?? null,
    traversal_ids: [...(p?.traversal_ids ?? []), id],
    full_path: p ? `${p.full_path}/${s.path}` : s.path,
    full_name: p ? `${p.full_name} / ${s.name}` : s.name,
    ...s,
  },
});

const update = (changes: Partial<GroupSettings>, extra: Partial<Extract<GroupCommand, { type: 'UpdateGroup' }>> = {}): GroupCommand => ({
  type: 'UpdateGroup',
  changes,
  parent: null,
  childGroupVisibility: null,
  projectVisibility: null,
  mayUnlockShareWithGroupLock: true,
  currentShareWithGroupLock: false,
  ...extra,
});

describe('CreateGroup', () => {
  it('creates a top-level group', () => {
    given().when({ type: 'CreateGroup', settings: settings(), parent: null }).then([created()]);
  });

  it('creates a subgroup with the joined full path, full name and traversal ids', () => {
    const p = parent();
    given()
      .when({ type: 'CreateGroup', settings: settings({ name: 'Web', path: 'web' }), parent: p })
      .then([created(settings({ name: 'Web', path: 'web' }), p)]);
  });

  it("takes the parent's share_with_group_lock", () => {
    const [event] = groupDecider.decide({ type: 'CreateGroup', settings: settings(), parent: parent({ share_with_group_lock: true }) }, groupDecider.initialState(2));
    expect((event as Extract<GroupEvent, { type: 'GroupCreated' }>).data.share_with_group_lock).toBe(true);
  });

  it('refuses a subgroup more visible than its parent, with GitLab’s message', () => {
    given()
      .when({ type: 'CreateGroup', settings: settings({ visibility: 'public' }), parent: parent({ visibility: 'internal' }) })
      .then(rejected('invalid', { fields: { visibility_level: ['public is not allowed since the parent group has a internal visibility.'] } }));
  });

  it('validates name and path like GitLab', () => {
    given()
      .when({ type: 'CreateGroup', settings: settings({ name: '', path: '-bad' }), parent: null })
      .then(rejected('invalid', { fields: {
        name: ["can't be blank"],
        path: ["can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'."],
      } }));
    given().when({ type: 'CreateGroup', settings: settings({ path: 'x.git' }), parent: null }).then(rejected('invalid'));
    given().when({ type: 'CreateGroup', settings: settings({ path: '' }), parent: null }).then(rejected('invalid', { fields: {
      path: ["can't be blank", "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'."],
    } }));
    given().when({ type: 'CreateGroup', settings: settings({ name: 'a<b>' }), parent: null }).then(rejected('invalid', { fields: {
      name: ["can contain only letters, digits, '_', '.', dash and space."],
    } }));
  });

  it('refuses reserved top-level paths but allows them below a group', () => {
    given().when({ type: 'CreateGroup', settings: settings({ path: 'Admin' }), parent: null }).then(rejected('invalid', { fields: { path: ['Admin is a reserved name'] } }));
    given().when({ type: 'CreateGroup', settings: settings({ path: 'admin' }), parent: parent() }).then([created(settings({ path: 'admin' }), parent())]);
    given().when({ type: 'CreateGroup', settings: settings({ path: 'tree' }), parent: parent() }).then(rejected('invalid', { fields: { path: ['tree is a reserved name'] } }));
  });

  it('refuses nesting deeper than 20 ancestors', () => {
    const deep = parent({ traversal_ids: Array.from({ length: 21 }, (_, i) => i + 1) });
    on(99).given().when({ type: 'CreateGroup', settings: settings(), parent: deep }).then(rejected('invalid', { fields: { parent_id: ['has too deep level of nesting'] } }));
  });

  it('is a conflict on an existing stream', () => {
    given(created()).when({ type: 'CreateGroup', settings: settings(), parent: null }).then(rejected('conflict'));
  });

  it('claims the path among top-level namespaces, or among siblings', () => {
    expect(groupClaims(created(settings({ path: 'Acme' })), groupDecider.initialState(2)).acquire).toEqual([
      expect.objectContaining({ kind: 'namespace_path', key: 'acme' }),
    ]);
    expect(groupClaims(created(settings({ path: 'Web' }), parent()), groupDecider.initialState(2)).acquire).toEqual([
      expect.objectContaining({ kind: 'group_path', key: '1/web' }),
    ]);
  });
});

describe('UpdateGroup', () => {
  it('records only what changed, with the new full path and the previous one on a rename', () => {
    given(created())
      .when(update({ name: 'Acme Inc', path: 'acme-inc', description: '' }))
      .then([
        {
          type: 'GroupUpdated',
          data: {
            id: 2,
            changes: { name: 'Acme Inc', path: 'acme-inc' },
            full_path: 'acme-inc',
            full_name: 'Acme Inc',
            previous_full_path: 'acme',
            previous_full_name: 'Acme',
            previous_visibility: null,
          },
        },
      ]);
  });

  it('records the visibility before a change of visibility (schema version 2, for the audit)', () => {
    given(created())
      .when(update({ visibility: 'internal' }))
      .then([{ type: 'GroupUpdated', data: { id: 2, changes: { visibility: 'internal' }, full_path: 'acme', full_name: 'Acme', previous_visibility: 'private' } }]);
  });

  it('appends nothing when nothing changes', () => {
    given(created()).when(update({ name: 'Acme', visibility: 'private' })).then([]);
  });

  it('swaps path claims on a rename and keeps them on a case-only change', () => {
    const { state } = given(created());
    const [renamed] = groupDecider.decide(update({ path: 'other' }), state);
    expect(groupClaims(renamed!, state)).toEqual({
      acquire: [expect.objectContaining({ kind: 'namespace_path', key: 'other' })],
      release: [expect.objectContaining({ kind: 'namespace_path', key: 'acme' })],
    });
    const [recased] = groupDecider.decide(update({ path: 'ACME' }), state);
    expect(groupClaims(recased!, state)).toEqual({ acquire: [], release: [] });
  });

  it('refuses lowering visibility below a project or a subgroup', () => {
    given(created(settings({ visibility: 'public' })))
      .when(update({ visibility: 'private' }, { projectVisibility: 'internal', childGroupVisibility: 'public' }))
      .then(rejected('invalid', { fields: {
        visibility_level: [
          'private is not allowed since this group contains projects with higher visibility.',
          'private is not allowed since there are sub-groups with higher visibility.',
        ],
      } }));
  });

  it('refuses raising a subgroup above its parent', () => {
    given(created(settings(), parent()))
      .when(update({ visibility: 'public' }, { parent: parent() }))
      .then(rejected('invalid', { fields: { visibility_level: ['public is not allowed since the parent group has a internal visibility.'] } }));
  });

  it('refuses unlocking sharing under a locked parent unless allowed', () => {
    given(created(settings({ share_with_group_lock: true }), parent({ share_with_group_lock: true })))
      .when(update({ share_with_group_lock: false }, { parent: parent({ share_with_group_lock: true }), mayUnlockShareWithGroupLock: false, currentShareWithGroupLock: true }))
      .then(rejected('invalid', { fields: {
        share_with_group_lock: ['cannot be disabled when the parent group "Share with group lock" is enabled, except by the owner of the parent group'],
      } }));
  });

  it('is 404 for a group that does not exist or is being deleted', () => {
    given().when(update({ name: 'x' })).then(rejected('not_found'));
    given(created(), { type: 'GroupDeletionScheduled', data: { id: 2, full_path: 'acme' } }).when(update({ name: 'x' })).then(rejected('not_found'));
  });
});

describe('deletion', () => {
  it('schedules, then deletes once, releasing the path', () => {
    const scheduled = given(created()).when({ type: 'ScheduleGroupDeletion', fullPath: 'acme' });
    scheduled.then([{ type: 'GroupDeletionScheduled', data: { id: 2, full_path: 'acme' } }]);
    const history: GroupEvent[] = [created(), { type: 'GroupDeletionScheduled', data: { id: 2, full_path: 'acme' } }];
    given(...history).when({ type: 'ScheduleGroupDeletion', fullPath: 'acme' }).then(rejected('not_found'));
    given(...history).when({ type: 'DeleteGroup', fullPath: 'acme' }).then([{ type: 'GroupDeleted', data: { id: 2, full_path: 'acme' } }]);
    const { state } = given(...history);
    expect(groupClaims({ type: 'GroupDeleted', data: { id: 2, full_path: 'acme' } }, state).release).toEqual([{ kind: 'namespace_path', key: 'acme', conflictMessage: expect.any(String) }]);
    given(...history, { type: 'GroupDeleted', data: { id: 2, full_path: 'acme' } }).when({ type: 'DeleteGroup', fullPath: 'acme' }).then([]);
  });
});

describe('custom attributes', () => {
  it('sets, skips an unchanged value, and deletes', () => {
    given(created()).when({ type: 'SetGroupCustomAttribute', key: 'k', value: 'v' }).then([{ type: 'GroupCustomAttributeSet', data: { id: 2, key: 'k', value: 'v' } }]);
    const withAttribute: GroupEvent[] = [created(), { type: 'GroupCustomAttributeSet', data: { id: 2, key: 'k', value: 'v' } }];
    given(...withAttribute).when({ type: 'SetGroupCustomAttribute', key: 'k', value: 'v' }).then([]);
    given(...withAttribute).when({ type: 'DeleteGroupCustomAttribute', key: 'k' }).then([{ type: 'GroupCustomAttributeDeleted', data: { id: 2, key: 'k' } }]);
    given(created()).when({ type: 'DeleteGroupCustomAttribute', key: 'k' }).then(rejected('not_found'));
  });
});
