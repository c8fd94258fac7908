import type { Compilable, CompiledQuery, Kysely, QueryResult } from 'kysely';

/**
 * Queries built and compiled once. Kysely builds a query's node tree and compiles it to SQL
 * on every call — 30–60 µs of CPU for a users lookup, a tenth of an authenticated GET — so
 * the statements every request sends (authentication, user lookups, the append) are
 * compiled on first use and later runs only bind new values.
 *
 *     const byId = precompiled((db: Db, id: Slot<number>) => db.selectFrom('users').selectAll().where('id', '=', id));
 *     const rows = await byId.execute(db, 7);
 *
 * A slot stands for one scalar value; values that change the SQL's shape (lists, optional
 * clauses) do not belong in a precompiled query.
 *
 * A kernel fast path, for the statements every request sends. An area's queries are plain
 * Kysely; the few precompiled ones outside the kernel say so (`Fast path (not a pattern to
 * copy)`, docs/architecture.md).
 */
const SLOT = Symbol('slot');
const MAX_SLOTS = 64;
export type Slot<T> = T & { readonly [SLOT]: number };
type Slots<A extends unknown[]> = { [K in keyof A]: Slot<A[K]> };

interface Template<R> {
  readonly compiled: CompiledQuery<R>;
  /** Per parameter: the argument index it takes, or the constant it keeps. */
  readonly bindings: readonly ({ slot: number } | { constant: unknown })[];
}

export function precompiled<D extends Kysely<any>, A extends unknown[], R>(build: (db: D, ...slots: Slots<A>) => Compilable<R>) {
  let template: Template<R> | undefined;
  const compile = (db: D): Template<R> => {
    const slots = Array.from({ length: MAX_SLOTS }, (_, i) => ({ [SLOT]: i })) as unknown as Slots<A>;
    const compiled = build(db, ...slots).compile();
    const bindings = compiled.parameters.map((p) =>
      p !== null && typeof p === 'object' && SLOT in p ? { slot: (p as { [SLOT]: number })[SLOT] } : { constant: p },
    );
    return { compiled, bindings };
  };
  return {
    /** The query with these values, to send some other way (a statement batch). */
    compile(db: D, ...args: A): CompiledQuery<R> {
      template ??= compile(db);
      const parameters = template.bindings.map((b) => ('slot' in b ? args[b.slot] : b.constant));
      return { ...template.compiled, parameters };
    },
    /** Runs the statement and reads nothing of its result (what inline projections sent in one round trip need). */
    async send(db: D, ...args: A): Promise<void> {
      await db.executeQuery(this.compile(db, ...args));
    },
    async execute(db: D, ...args: A): Promise<R[]> {
      const result: QueryResult<R> = await db.executeQuery(this.compile(db, ...args));
      return result.rows;
    },
    async takeFirst(db: D, ...args: A): Promise<R | undefined> {
      return (await this.execute(db, ...args))[0];
    },
  };
}

/**
 * Precompiled queries whose SQL depends on a shape: one per shape (the columns an UPDATE
 * sets, say), compiled on its first use. Past `capacity` shapes the rare ones are not kept.
 *
 *     const update = precompiledPerShape((columns: readonly string[]) => (db: Db, ...values: Slot<unknown>[]) => …);
 *     await update(['status_emoji', 'status_message']).send(db, '☕', 'busy');
 */
export function precompiledPerShape<D extends Kysely<any>, A extends unknown[], R>(
  build: (shape: readonly string[]) => (db: D, ...slots: Slots<A>) => Compilable<R>,
  capacity = 256,
) {
  const byShape = new Map<string, ReturnType<typeof precompiled<D, A, R>>>();
  return (shape: readonly string[]) => {
    const key = shape.join(',');
    let query = byShape.get(key);
    if (!query) {
      query = precompiled(build(shape));
      if (byShape.size < capacity) byShape.set(key, query);
    }
    return query;
  };
}
