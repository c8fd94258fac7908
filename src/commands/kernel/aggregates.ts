import { AGGREGATES } from '../../domain/aggregates.js';
import type { AnyAggregate } from '../../domain/aggregate.js';
import { feedColumns, type FeedIndexOf } from '../../eventstore/feed-index.js';
import { registerEventType } from '../../eventstore/upcasters.js';
import type { Projector } from '../../projections/projector.js';
import type { Reactor } from './reactor.js';

/**
 * Tells the event store each event type's upcasters and schema (checked after upcasting).
 * The composition root does this (openRuntime, the CLI, the test kit), before anything reads the log.
 */
export function installEventTypes(aggregates: readonly AnyAggregate[] = AGGREGATES): void {
  for (const aggregate of aggregates) {
    for (const type of aggregate.eventTypes) {
      const schema = aggregate.events[type];
      registerEventType(type, { upcasters: aggregate.upcasters?.[type], validate: (data) => schema.parse(data) });
    }
  }
}

/**
 * `forgelog events verify`'s recompute of the feed index columns, from the aggregates as they
 * are when it runs: an event's type names its aggregate, whose `index` the append called
 * (append-steps.ts, through the command spec), and feedColumns maps the result and the
 * metadata to the columns as planAppend did. A type no aggregate defines gives undefined
 * (verify reports it). A type defined twice is refused at start-up (eventCoverageProblems).
 */
export function feedIndexOfAggregates(aggregates: readonly AnyAggregate[]): FeedIndexOf {
  const byType = new Map<string, AnyAggregate>();
  for (const aggregate of aggregates) for (const type of aggregate.eventTypes) byType.set(type, aggregate);
  return (type, data, metadata) => {
    const aggregate = byType.get(type);
    return aggregate && feedColumns(aggregate.index?.({ type, data }), metadata);
  };
}

export const feedIndexOf: FeedIndexOf = feedIndexOfAggregates(AGGREGATES);

/**
 * The start-up check that no event goes unprojected in silence: every event type an
 * aggregate defines is handled by some projector (or declared feed-only by its aggregate),
 * and every type a projector or reactor handles is one an aggregate defines (a misspelt or
 * removed type would otherwise never arrive); and no type is defined by two aggregates (its
 * stream, schema and feed index would be ambiguous). Returns the problems; openRuntime
 * refuses to start on any.
 */
export function eventCoverageProblems(
  projectors: readonly Pick<Projector, 'name' | 'handles'>[],
  reactors: readonly Pick<Reactor<unknown>, 'name' | 'handles'>[],
  aggregates: readonly AnyAggregate[] = AGGREGATES,
): string[] {
  const defined = new Map<string, string>();
  const problems: string[] = [];
  for (const aggregate of aggregates) {
    for (const type of aggregate.eventTypes) {
      const other = defined.get(type);
      if (other !== undefined) problems.push(`${type} is defined by both ${other} and ${aggregate.name}`);
      else defined.set(type, aggregate.name);
    }
  }
  const projected = new Set(projectors.flatMap((p) => p.handles));
  for (const aggregate of aggregates) {
    const feedOnly = new Set<string>(aggregate.feedOnly ?? []);
    for (const type of aggregate.eventTypes) {
      if (!projected.has(type) && !feedOnly.has(type)) problems.push(`${type} (${aggregate.name}) is handled by no projector`);
      if (projected.has(type) && feedOnly.has(type)) problems.push(`${type} (${aggregate.name}) is declared feed-only but projected`);
    }
  }
  for (const { name, handles } of [...projectors, ...reactors]) {
    for (const type of handles) if (!defined.has(type)) problems.push(`${name} handles ${type}, which no aggregate defines`);
  }
  return problems;
}
