import { describe, expect, it } from 'vitest';
import type { AnyAggregate } from '../../src/domain/aggregate.js';
import { AGGREGATES as LIST } from '../../src/domain/aggregates.js';
import { AUDIT_ENTITY_TYPES_OF, AUDITED, AUDITED_EVENT_TYPES, NOT_AUDITED, describeAudit } from '../../src/domain/feeds/audit.js';
import { groupEvents, groupUpcasters } from '../../src/domain/groups/events.js';
import { memberEvents, memberUpcasters } from '../../src/domain/members.js';
import { projectEvents, projectUpcasters } from '../../src/domain/projects/events.js';
import { userEvents, userUpcasters } from '../../src/domain/users.js';

const AGGREGATES: readonly AnyAggregate[] = LIST;

const lookup = { userName: (id: number) => (id === 5 ? 'Alice' : null) };

describe('the audit mapping', () => {
  it('names every event type of the aggregates exactly once: audited or not, with a reason', () => {
    const defined = AGGREGATES.flatMap((aggregate) => [...aggregate.eventTypes]);
    const audited = new Set<string>(AUDITED_EVENT_TYPES);
    const notAudited = new Set(Object.keys(NOT_AUDITED));
    for (const type of defined) expect([type, audited.has(type) !== notAudited.has(type)]).toEqual([type, true]);
    expect([...audited, ...notAudited].sort()).toEqual([...defined].sort());
  });

  it("puts each record on the entity the event's feed index names (what the query filters on)", () => {
    const samples = {
      MemberAdded: { source_type: 'Project', source_id: 3, user_id: 5, access_level: 30, expires_at: null, created_by_id: 1 },
      MemberRemoved: { source_type: 'Namespace', source_id: 4, user_id: 5, reason: 'removed' },
      ProjectCreated: { id: 3, path_with_namespace: 'g/p' },
      GroupUpdated: { id: 4, changes: { visibility: 'public' }, full_path: 'g', full_name: 'G', previous_visibility: 'private' },
      UserPasswordChanged: { id: 5, password_hash: 'x', expires_now: true },
    } as const;
    const indexOf = (type: string, data: unknown) => {
      const aggregate = AGGREGATES.find((a) => a.eventTypes.includes(type))!;
      return aggregate.index!({ type, data } as never);
    };
    for (const [type, data] of Object.entries(samples)) {
      const { entity } = describeAudit(type as keyof typeof AUDITED, data, lookup);
      const index = indexOf(type, data);
      const column = entity.type === 'Project' ? index.projectId : entity.type === 'Group' ? index.groupId : index.targetId;
      expect([type, column, entity.type === 'Project' || !index.projectId]).toEqual([type, entity.id, true]);
      expect(AUDIT_ENTITY_TYPES_OF[type as keyof typeof AUDITED]).toContain(entity.type);
    }
  });

  it("describes members as EE's AuditEventService#for_member does", () => {
    const ref = { source_type: 'Namespace', source_id: 4, user_id: 5 } as const;
    expect(describeAudit('MemberUpdated', { ...ref, access_level: 40, expires_at: null, previous_access_level: 30 }, lookup)).toEqual({
      entity: { type: 'Group', id: 4 },
      action: { change: 'access_level', from: 'Developer', to: 'Maintainer' },
      target: { target_id: 5, target_type: 'User', target_details: 'Alice' },
    });
    // An event stored before schema version 2 does not know the level before.
    expect(describeAudit('MemberUpdated', { ...ref, access_level: 40, expires_at: null, previous_access_level: null }, lookup).action).toEqual({
      change: 'access_level',
      from: null,
      to: 'Maintainer',
    });
    expect(describeAudit('MemberRemoved', { ...ref, user_id: 6, reason: 'left' }, lookup).target).toEqual({ target_id: 6, target_type: 'User', target_details: 'Deleted User' });
  });

  it("describes a project change as EE's ProjectChangesAuditor, one record per event in its order (visibility, path, name)", () => {
    const data = {
      id: 3,
      changes: { name: 'Shop', visibility: 'public' },
      path_with_namespace: 'g/shop',
      name_with_namespace: 'G / Shop',
      previous: { visibility: 'internal', path_with_namespace: 'g/shop', name_with_namespace: 'G / Site' },
    } as const;
    expect(describeAudit('ProjectUpdated', data, lookup)).toEqual({
      entity: { type: 'Project', id: 3 },
      action: { change: 'visibility', from: 'Internal', to: 'Public' },
      target: { target_id: 3, target_type: 'Project', target_details: 'g/shop' },
      entityPath: 'g/shop',
    });
    expect(describeAudit('ProjectUpdated', { ...data, changes: { name: 'Shop' } }, lookup).action).toEqual({ change: 'name', from: 'G / Site', to: 'G / Shop' });
    expect(AUDITED.ProjectUpdated.changesAnyOf).toEqual(['visibility', 'path', 'name']);
  });
});

describe('schema version 2 of the audited updates', () => {
  it.each([
    ['MemberUpdated', memberEvents.MemberUpdated, memberUpcasters.MemberUpdated, { source_type: 'Project', source_id: 1, user_id: 2, access_level: 30, expires_at: null }, { previous_access_level: null }],
    [
      'GroupUpdated',
      groupEvents.GroupUpdated,
      groupUpcasters.GroupUpdated,
      { id: 1, changes: { visibility: 'public' }, full_path: 'g', full_name: 'G' },
      { previous_visibility: null },
    ],
    [
      'ProjectUpdated',
      projectEvents.ProjectUpdated,
      projectUpcasters.ProjectUpdated,
      { id: 1, changes: { name: 'x' } },
      { path_with_namespace: null, name_with_namespace: null, previous: null },
    ],
    ['UserProfileUpdated', userEvents.UserProfileUpdated, userUpcasters.UserProfileUpdated, { id: 1, changes: { email: 'a@b.c' } }, { previous_email: null }],
  ] as const)('%s: version 1 is upcast with null for what it did not record, and passes the schema', (_type, schema, upcasters, v1, added) => {
    expect(schema.safeParse(v1).success).toBe(false);
    const v2 = upcasters![1]!(v1);
    expect(v2).toEqual({ ...v1, ...added });
    expect(schema.parse(v2)).toEqual(v2);
  });
});
