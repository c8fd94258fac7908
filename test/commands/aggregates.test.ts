import { describe, expect, it } from 'vitest';
import type { AnyAggregate } from '../../src/domain/aggregate.js';
import { AGGREGATES as LIST } from '../../src/domain/aggregates.js';
import { eventCoverageProblems } from '../../src/commands/kernel/aggregates.js';
import { REACTORS } from '../../src/commands/reactors.js';
import { PROJECTORS } from '../../src/projections/registry.js';

const AGGREGATES: readonly AnyAggregate[] = LIST;

describe('the start-up check of event types', () => {
  it('finds every type of every aggregate projected, and every handled type defined', () => {
    expect(eventCoverageProblems(PROJECTORS, REACTORS)).toEqual([]);
    expect(new Set(AGGREGATES.map((a) => a.name)).size).toBe(AGGREGATES.length);
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
