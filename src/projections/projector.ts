import type { Db } from '../database/database.js';
import type { DataOf, KnownEvent, KnownEventType } from '../domain/aggregates.js';
import type { DomainEvent } from '../domain/decider.js';
import type { ProjectedEvent } from '../eventstore/types.js';
import { REPLAY_GUARD, claimStreamVersion, recordStreamVersion, type BatchGuard } from './stream-versions.js';

/**
 * A projector keeps read tables from events with idempotent statements, so the same code runs
 * inline (in the append's transaction), in the async worker and in rebuild. Areas define one
 * with `defineProjector`; this is what the runner, the rebuild and the command kernel see.
 */
export interface Projector {
  readonly name: string;
  /** Bump to rebuild the projection from the log. */
  readonly version: number;
  /** Inline projections run in the append transaction (tables the REST API reads). */
  readonly mode: 'inline' | 'async';
  readonly handles: readonly string[];
  /**
   * The handled types whose streams' versions the projection records (`<name>_stream_versions`):
   * an event of one of them is applied once. The others (cascades) are applied every time.
   */
  readonly guarded: readonly string[];
  /** The read tables this projector owns (rebuilt and swapped together). */
  readonly tables: readonly string[];
  /**
   * Other projectors' tables `apply` reads. A rebuild replays a projector in one sequence
   * with the owners of those tables, after them; projectors that share nothing replay side
   * by side, each on its own connection.
   */
  readonly reads?: readonly string[];
  /** Whether applying `event` reads the `reads` tables as they stand at it (ProjectorDefinition.readsNow): a replay applies their owners' events up to it first. */
  readonly readsNow?: (event: ProjectedEvent) => boolean;
  /** Groups of guarded types of which a replay through a fixed position needs only each stream's last event (ProjectorDefinition.lastWins). */
  readonly lastWins?: readonly (readonly string[])[];
  /** Types whose runs of events in a stream a replay through a fixed position may fold into one (ProjectorDefinition.mergeRuns). */
  readonly mergeRuns?: readonly MergeRun[];
  /** Applies an event that may have been applied before (the worker, a replay, a Geo secondary): guarded. */
  apply(event: ProjectedEvent, trx: Db): Promise<void>;
  /**
   * Applies an event the same transaction has just appended, so it is new to every
   * projection: the guard only records its version, reading nothing back, and a projector
   * whose handlers read nothing either is sent with the append in one round trip
   * (src/commands/kernel/record-projections.ts finds that out by itself).
   */
  applyNew(event: ProjectedEvent, trx: Db): Promise<void>;
  /**
   * Applies the handled events of a batch (in log order), keeping the stream versions the way
   * `guard` says (REPLAY_GUARD when not given): the async worker's and rebuild's path. Must
   * leave the same rows as `apply` on each in turn (test/properties/apply-batch.test.ts).
   */
  applyBatch(events: readonly ProjectedEvent[], trx: Db, guard?: BatchGuard): Promise<void>;
}

/** A type whose runs of events fold into one: the last of the run with their `field` objects merged (ProjectorDefinition.mergeRuns). */
export interface MergeRun<T extends string = string> {
  readonly type: T;
  readonly field: string;
  readonly except: readonly string[];
}

/** An event of one of the types `T` as a projector's handler receives it. */
export type Projected<T extends KnownEventType> = T extends KnownEventType
  ? Omit<ProjectedEvent, 'type' | 'data'> & { readonly type: T; readonly data: DataOf<T> }
  : never;

type Handler<E> = (event: E, trx: Db) => Promise<unknown>;

/** A handler per event type, each typed by its event: no cast, no switch. */
export type Handlers<E extends DomainEvent = KnownEvent> = {
  readonly [T in E['type']]?: Handler<Omit<ProjectedEvent, 'type' | 'data'> & Extract<E, { type: T }>>;
};

export interface ProjectorDefinition<E extends DomainEvent = KnownEvent> {
  /** Also names the stream versions table, `<name>_stream_versions`, which the kernel adds to `tables`. */
  readonly name: string;
  /** 1 unless given; bump it to rebuild the projection from the log. */
  readonly version?: number;
  /** Inline unless given. */
  readonly mode?: 'inline' | 'async';
  /** The read tables it writes, without its stream versions table. */
  readonly tables: readonly string[];
  readonly reads?: readonly string[];
  /**
   * Whether applying `event` reads the `reads` tables for what they hold at that event: a fact
   * of that moment kept as it was (a mention of `#5` resolves to the issue #5 that exists when
   * it is written, or to none), not a state that later events bring up to date (a project's
   * names recomputed from its namespace's: a rename recomputes them again). The inline path
   * applies each event to every projector in turn, so it sees those tables as they stood; a
   * replay applies a page to one projector after another, and cuts the page after each event
   * this answers true for, so that the owners of `reads` have applied the events up to it
   * first (applyInOrder, src/projections/rebuild.ts). Every cut costs a statement per
   * projector of the page: answer true only for the events whose handler does read.
   */
  readonly readsNow?: (event: Omit<ProjectedEvent, 'type' | 'data'> & E) => boolean;
  /** What each event of the area (or another's it keeps rows for) does: applied once per event, the kernel guarding by stream version. */
  readonly on: Handlers<E>;
  /**
   * Other areas' events applied every time they come, unguarded: deletions that cascade,
   * renames that propagate. Each statement must hold by itself on a replay (an absolute
   * condition: "delete where project_id = …").
   */
  readonly cascades?: Handlers<E>;
  /**
   * Groups of types of `on` whose event leaves the tables as if no earlier event of its group
   * in the same stream had been applied: it sets again, in full, all that such an event set
   * (a status set or cleared sets every status column of the user's row, and the row's
   * version and time, as every event of the stream does). Whatever events come between, the
   * earlier one's effect is gone once the later one is applied. A replay into empty tables
   * through a fixed position (an `as_of` view's build, src/projections/as-of.ts) applies only
   * each stream's last event of a group, as log compaction does.
   * test/properties/apply-batch.test.ts holds every group to this.
   */
  readonly lastWins?: readonly (readonly E['type'][])[];
  /**
   * Handled types whose event sets only what its `field` object holds, each key as it is (a
   * profile edit sets the fields it changes), and whose stream's events of other types set
   * none of that (a status, a block, an avatar): the events of a run of them in a stream
   * leave the tables as one event would whose `field` merges theirs, later keys winning, in
   * the run's last place. An event whose `field` holds a key of `except` does not merge, and
   * ends the run before it (a rename, which other projectors follow, and which a `readsNow`
   * reader of their tables must see in its place). An `as_of` view's build replays each run
   * as that one event. Every projector handling the type declares it alike, or it does not
   * count; test/properties/apply-batch.test.ts holds them to it.
   */
  readonly mergeRuns?: readonly MergeRun<E['type']>[];
  /**
   * A faster path of its own for a batch: `events` are the batch's events to apply, in log
   * order (those the guard lets through, and cascades); `handle` applies one the ordinary way.
   * The kernel keeps the stream versions around it.
   */
  readonly batch?: (events: readonly ProjectedEvent[], trx: Db, handle: (event: ProjectedEvent) => Promise<unknown>) => Promise<void>;
}

/**
 * The projector an area defines: its tables, a handler per event type, its cascades. The
 * kernel derives the rest: the types it handles, its stream versions table, the guard on
 * every path (write-only when the event was just appended), and a batch path.
 */
export function defineProjector<E extends DomainEvent = KnownEvent>(definition: ProjectorDefinition<E>): Projector {
  const versions = `${definition.name}_stream_versions`;
  const on = definition.on as Record<string, Handler<ProjectedEvent> | undefined>;
  const cascades = (definition.cascades ?? {}) as Record<string, Handler<ProjectedEvent> | undefined>;
  const guarded = Object.keys(on);
  for (const type of Object.keys(cascades)) if (Object.hasOwn(on, type)) throw new Error(`${definition.name}: ${type} is both guarded and a cascade`);
  const isGuarded = (type: string) => Object.hasOwn(on, type);
  const lastWins = (definition.lastWins ?? []) as readonly (readonly string[])[];
  for (const [i, group] of lastWins.entries())
    for (const type of group) {
      if (!isGuarded(type)) throw new Error(`${definition.name}: ${type} wins last but is not a guarded type`);
      if (lastWins.some((other, j) => j !== i && other.includes(type))) throw new Error(`${definition.name}: ${type} is in two lastWins groups`);
    }
  for (const run of definition.mergeRuns ?? []) if (!on[run.type] && !cascades[run.type]) throw new Error(`${definition.name}: ${run.type} merges runs but is not handled`);
  const handler = (event: ProjectedEvent) => (isGuarded(event.type) ? on[event.type] : cascades[event.type])!;
  return {
    name: definition.name,
    version: definition.version ?? 1,
    mode: definition.mode ?? 'inline',
    handles: [...guarded, ...Object.keys(cascades)],
    guarded,
    tables: [...definition.tables, versions],
    ...(definition.reads ? { reads: definition.reads } : {}),
    ...(definition.readsNow ? { readsNow: definition.readsNow as (event: ProjectedEvent) => boolean } : {}),
    lastWins,
    mergeRuns: definition.mergeRuns ?? [],
    async apply(event, trx) {
      if (isGuarded(event.type) && !(await claimStreamVersion(trx, versions, event))) return;
      await handler(event)(event, trx);
    },
    async applyNew(event, trx) {
      await handler(event)(event, trx);
      if (isGuarded(event.type)) await recordStreamVersion(trx, versions, event);
    },
    async applyBatch(events, trx, guard = REPLAY_GUARD) {
      const fresh = await guard.keep(trx, versions, events.filter((event) => isGuarded(event.type)));
      // `fresh` is a subsequence of the guarded events: matched by place, not by identity, so an
      // event a batch holds twice (the same object, as a replay of a doubled log has it) runs once.
      const applied: ProjectedEvent[] = [];
      let next = 0;
      for (const event of events) {
        if (!isGuarded(event.type)) applied.push(event);
        else if (event === fresh[next]) applied.push(fresh[next++]!);
      }
      const handle = (event: ProjectedEvent) => handler(event)(event, trx);
      if (definition.batch) await definition.batch(applied, trx, handle);
      else for (const event of applied) await handle(event);
      await guard.record(trx, versions, fresh);
    },
  };
}
