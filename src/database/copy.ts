import { CompiledQuery, type Kysely } from 'kysely';
import pg from 'pg';

/**
 * `COPY table (columns) FROM STDIN` on the connection a Kysely instance runs on (inside a
 * transaction, the transaction's): rows in COPY's text format, a quarter of the server's
 * work of an INSERT … SELECT over json_to_recordset (bench: `forgelog events import`).
 *
 * Kysely has no COPY; both dialects hand the compiled query's `sql` to their client as it
 * is, so the statement travels as a CopyIn in place of the text: node-postgres runs any
 * object with `submit` as a query of its own (the PostgreSQL server asks for the data, the
 * CopyIn sends it), and the PGlite dialect (pglite-dialect.ts) reads it as PGlite's
 * `COPY … FROM '/dev/blob'` with the data as the blob.
 */
export class CopyIn extends (pg.Query as unknown as new (text: string) => pg.Query & { callback?: (error: Error | null) => void }) {
  private readonly done: Promise<{ rows: never[] }>;

  constructor(
    readonly table: string,
    readonly columns: readonly string[],
    readonly data: Buffer,
  ) {
    super(`copy ${table} (${columns.join(', ')}) from stdin`);
    this.done = new Promise((resolve, reject) => {
      this.callback = (error) => (error ? reject(error) : resolve({ rows: [] }));
    });
    this.done.catch(() => {}); // awaited through then()
  }

  /** PGlite's statement: the data comes as the query's blob. */
  get blobStatement(): string {
    return `copy ${this.table} (${this.columns.join(', ')}) from '/dev/blob'`;
  }

  /** node-postgres: the server is ready for the rows. */
  handleCopyInResponse(connection: { sendCopyFromChunk(chunk: Buffer): void; endCopyFrom(): void }): void {
    connection.sendCopyFromChunk(this.data);
    connection.endCopyFrom();
  }

  // Awaited by the dialect's `await client.query(…)`.
  then<T1, T2>(resolve: (value: { rows: never[] }) => T1, reject: (error: unknown) => T2): Promise<T1 | T2> {
    return this.done.then(resolve, reject);
  }
}

/** Runs the COPY on `db`'s connection (a transaction's, given `trx`). */
export async function copyInto<DB>(db: Kysely<DB>, table: string, columns: readonly string[], rows: CopyRows): Promise<void> {
  const statement = new CopyIn(table, columns, rows.data());
  await db.executeQuery({ ...CompiledQuery.raw(''), sql: statement as unknown as string });
}

/**
 * Rows of COPY's text format, each written out as UTF-8 as it is added (a string of a whole
 * batch, built by appending, costs twice as much to encode at the end).
 */
export class CopyRows {
  private buffer = Buffer.allocUnsafe(1 << 16);
  private length = 0;

  /** One row: its fields (copyField) joined by tabs, ending in a newline. */
  add(row: string): void {
    const most = row.length * 3;
    if (this.length + most > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + most));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    this.length += this.buffer.write(row, this.length, 'utf8');
  }

  get empty(): boolean {
    return this.length === 0;
  }

  data(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

const SPECIAL = /[\\\t\n\r]/;
const SPECIALS = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** A value as a field of COPY's text format; null as \N. */
export function copyField(value: string | number | null): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPES[c]!) : value;
}
