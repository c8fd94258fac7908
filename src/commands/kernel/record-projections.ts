import {
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { Database, Db } from '../../database/database.js';
import type { ProjectedEvent } from '../../eventstore/types.js';
import type { Projector } from '../../projections/projector.js';
import { runInlineProjections } from './append-steps.js';

/**
 * Inline projections recorded instead of run, so that one-round-trip.ts can send their
 * statements together with the append. That is sound only while no projector acts on what
 * a statement returns — rows, counts, whether a row was there — for nothing has run yet.
 * Nobody declares it: the recording finds out. Every result a recorded statement gives is
 * a tripwire: reading any of it (its `rows`, `numAffectedRows`, `insertId`, a query
 * builder's result: `numUpdatedRows`, `numDeletedRows` …), running a `select` or a
 * `returning` through a query builder (which reads their rows), reading the event's place in
 * the log (it has none yet), or opening a transaction throws UnrecordableProjection, naming
 * the projector, the event and the statement. A projector that catches that error is found
 * out all the same. The caller then runs the projections for real; no projector ever sees an
 * empty result in place of the one the database would give.
 */
export async function recordProjections(
  projectors: readonly Projector[],
  events: readonly ProjectedEvent[],
): Promise<CompiledQuery[] | UnrecordableProjection> {
  const recording = new Recording();
  const unplaced = events.map((event) => new UnplacedEvent(event, recording));
  try {
    await runInlineProjections(recording.db, projectors, unplaced, (projector, event) => recording.applying(projector, event.type));
  } catch (error) {
    if (!recording.refusal) throw error;
  }
  return recording.refusal ?? recording.statements;
}

/** A projector did what a recorded statement cannot support (see recordProjections). */
export class UnrecordableProjection extends Error {
  constructor(
    readonly projector: Projector,
    readonly eventType: string,
    what: string,
  ) {
    super(`the ${projector.name} projector, applying ${eventType}, ${what}: its statements cannot be sent before they have run (src/commands/kernel/record-projections.ts)`);
  }
}

/** A query builder's methods that run it (and read its result, for a select or a `returning`). */
const RUNS = new Set<PropertyKey>(['execute', 'executeTakeFirst', 'executeTakeFirstOrThrow', 'stream']);

/** An event whose position in the log (which a ProjectedEvent does not show) trips when read. */
class UnplacedEvent implements ProjectedEvent {
  readonly streamId: string;
  readonly streamVersion: number;
  readonly eventId: string;
  readonly type: string;
  readonly schemaVersion: number;
  readonly data: unknown;
  readonly occurredAt: Date;
  readonly #recording: Recording;

  constructor(event: ProjectedEvent, recording: Recording) {
    this.streamId = event.streamId;
    this.streamVersion = event.streamVersion;
    this.eventId = event.eventId;
    this.type = event.type;
    this.schemaVersion = event.schemaVersion;
    this.data = event.data;
    this.occurredAt = event.occurredAt;
    this.#recording = recording;
  }

  get globalPosition(): never {
    return this.#recording.refuse('read the event’s position in the log, which it has not been given yet');
  }

  get transactionId(): never {
    return this.globalPosition;
  }
}

class Recording {
  readonly statements: CompiledQuery[] = [];
  refusal: UnrecordableProjection | undefined;
  readonly db: Db;
  private projector: Projector | undefined;
  private eventType = '';

  constructor() {
    const connection: DatabaseConnection = {
      executeQuery: async <R>(query: CompiledQuery) => {
        this.statements.push(query);
        return this.unreadable(query) as QueryResult<R>;
      },
      streamQuery: () => this.refuse('streamed rows'),
    };
    const refused = () => this.refuse('opened a transaction');
    const driver: Driver = {
      init: async () => {},
      acquireConnection: async () => connection,
      beginTransaction: refused,
      commitTransaction: refused,
      rollbackTransaction: refused,
      releaseConnection: async () => {},
      destroy: async () => {},
    };
    const db = new Kysely<Database>({
      dialect: {
        createAdapter: () => new PostgresAdapter(),
        createDriver: () => driver,
        createIntrospector: (kysely) => new PostgresIntrospector(kysely),
        createQueryCompiler: () => new PostgresQueryCompiler(),
      },
    });
    this.db = this.guarded(db);
  }

  applying(projector: Projector, eventType: string) {
    this.projector = projector;
    this.eventType = eventType;
  }

  refuse(what: string): never {
    this.refusal ??= new UnrecordableProjection(this.projector!, this.eventType, what);
    throw this.refusal;
  }

  /** A statement's result that trips when anything of it is read. */
  private unreadable(query: CompiledQuery): object {
    const read = (key: PropertyKey): never => this.refuse(`read \`${String(key)}\` of a recorded statement (${query.sql})`);
    // `then` stays undefined, so that awaiting the result is not reading it.
    return new Proxy(Object.create(null) as object, { get: (_, key) => (key === 'then' ? undefined : read(key)), ownKeys: () => read('keys') });
  }

  /**
   * `target` with its query builders guarded: running one records its statement and answers
   * with an unreadable result, where Kysely's own `execute` would read the result at once
   * (the rows of a select or a `returning`; the counts of any other statement).
   */
  private guarded<T extends object>(target: T): T {
    return new Proxy(target, {
      get: (t, key) => {
        const value: unknown = Reflect.get(t, key, t);
        if (typeof value !== 'function') return value;
        if (RUNS.has(key) && isQueryBuilder(t)) return () => this.run(t, key);
        return (...args: unknown[]) => {
          const out: unknown = value.apply(t, args);
          return makesQueries(out) ? this.guarded(out) : out;
        };
      },
    });
  }

  /** What a guarded builder's `execute`, `executeTakeFirst` … answer (refusals are thrown at once: `stream` is not awaited). */
  private run(builder: { compile(): CompiledQuery }, method: PropertyKey) {
    const query = builder.compile();
    const node = query.query as { kind: string; returning?: unknown };
    if (node.kind === 'SelectQueryNode' || node.returning) this.refuse(`ran a query whose rows are read (${query.sql})`);
    if (method === 'stream') this.refuse('streamed rows');
    this.statements.push(query);
    const result = this.unreadable(query);
    return Promise.resolve(method === 'execute' ? [result] : result);
  }
}

const isQueryBuilder = (value: object): value is { compile(): CompiledQuery } => typeof (value as { compile?: unknown }).compile === 'function';

/** A query builder, or what makes them (the Kysely instance, `with` clauses). */
const makesQueries = (value: unknown): value is object =>
  value !== null &&
  typeof value === 'object' &&
  (typeof (value as { execute?: unknown }).execute === 'function' || typeof (value as { selectFrom?: unknown }).selectFrom === 'function');
