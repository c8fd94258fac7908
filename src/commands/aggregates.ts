import { feedColumns, type FeedIndexOf } from '../eventstore/feed-index.js';
import { registerEventType } from '../eventstore/upcasters.js';
import type { Projector } from '../projections/projector.js';
import type { Reactor } from '../projections/runner.js';
import type { Aggregate } from './aggregate.js';
import { environments } from './environments.js';
import { featureFlags } from './feature-flags.js';
import { epics } from './epics.js';
import { labels } from './labels.js';
import { mergeRequests } from './merge-requests.js';
import { milestones } from './milestones.js';
import { todos } from './todos.js';
import { broadcastMessages } from './broadcast-messages.js';
import { deployKeys } from './deploy-keys.js';
import { applicationSettings } from './application-settings.js';
import { groups } from './groups.js';
import { integrations } from './integrations.js';
import { members } from './members.js';
import { notificationSettings } from './notification-settings.js';
import { projects } from './projects.js';
import { protectedBranches } from './protected-branches.js';
import { users } from './users.js';
import { scim } from './scim.js';
import { geoNodes } from './geo-nodes.js';
import { containerRepositories } from './container-repositories.js';
import { repository } from './repository.js';

/** Every aggregate: the event types the log may hold are theirs. */
export const AGGREGATES: readonly Aggregate<any, any, any, any>[] = [users, groups, members, projects, environments, broadcastMessages, deployKeys, notificationSettings, protectedBranches, applicationSettings, integrations, featureFlags, scim, geoNodes, epics, todos, containerRepositories, milestones, labels, repository, mergeRequests];

/**
 * Tells the event store each event type's upcasters and schema (checked after upcasting).
 * The database does this when it opens (src/database.ts), before anything reads the log.
 */
export function installEventTypes(aggregates = AGGREGATES): void {
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
export function feedIndexOfAggregates(aggregates: readonly Aggregate<any, any, any, any>[]): FeedIndexOf {
  const byType = new Map<string, Aggregate<any, any, any, any>>();
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
  aggregates = AGGREGATES,
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
