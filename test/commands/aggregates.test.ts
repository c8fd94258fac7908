import { describe, expect, it } from 'vitest';
import { AGGREGATES, eventCoverageProblems } from '../../src/commands/aggregates.js';
import { REACTORS } from '../../src/commands/reactors.js';
import { PROJECTORS } from '../../src/projections/registry.js';

describe('the start-up check of event types', () => {
  it('finds every type of every aggregate projected, and every handled type defined', () => {
    expect(eventCoverageProblems(PROJECTORS, REACTORS)).toEqual([]);
    expect(AGGREGATES.map((a) => a.name)).toEqual(['users', 'groups', 'members', 'projects', 'environments', 'broadcast_messages', 'deploy_keys', 'notification_settings', 'protected_branches', 'application_settings', 'integrations', 'feature_flags', 'scim', 'geo_nodes', 'epics', 'todos', 'container_repositories', 'milestones', 'labels', 'repository', 'merge_requests']);
  });

  it('names a type no projector handles, a handled type no aggregate defines, and a feed-only type that is projected', () => {
    const members = AGGREGATES.find((a) => a.name === 'members')!;
    const withoutDenied = PROJECTORS.map((p) => ({ name: p.name, handles: p.handles.filter((t) => t !== 'AccessRequestDenied') }));
    expect(eventCoverageProblems(withoutDenied, REACTORS)).toEqual(['AccessRequestDenied (members) is handled by no projector']);
    expect(eventCoverageProblems(PROJECTORS, [{ name: 'typo', handles: ['GroupDeletionSheduled'] }])).toEqual([
      'typo handles GroupDeletionSheduled, which no aggregate defines',
    ]);
    const twice = [...AGGREGATES, { ...members, name: 'members_again' }];
    expect(eventCoverageProblems(PROJECTORS, REACTORS, twice)).toEqual(members.eventTypes.map((type) => `${type} is defined by both members and members_again`));
    const feedOnly = { ...members, feedOnly: ['AccessRequested'] };
    expect(eventCoverageProblems(PROJECTORS, REACTORS, AGGREGATES.map((a) => (a === members ? feedOnly : a)))).toEqual([
      'AccessRequested (members) is declared feed-only but projected',
    ]);
  });
});
