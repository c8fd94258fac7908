import { expect, it } from 'vitest';

/**
 * A permission matrix as a table: per endpoint, per visibility, the status each caller
 * gets. `permissionMatrix` turns every cell into one vitest case named
 * `GET /groups/:id/members as guest on private → 200`, and runs it with the row's
 * endpoint, caller and visibility, expecting that status.
 *
 *   permissionMatrix(
 *     {
 *       'GET /projects/:id': {
 *         private: { anonymous: 404, nonMember: 404, guest: 200, admin: 200 },
 *         public: { anonymous: 200, nonMember: 200 },
 *       },
 *     },
 *     async ({ endpoint, caller, visibility }) => (await call(endpoint, callers[caller], sources[visibility])).status,
 *   );
 */
export type MatrixTable<Caller extends string = string, Visibility extends string = string> = Readonly<
  Record<string, Partial<Record<Visibility, Partial<Record<Caller, number>>>>>
>;

export interface MatrixRow<Caller extends string = string, Visibility extends string = string> {
  readonly endpoint: string;
  readonly caller: Caller;
  readonly visibility: Visibility;
  readonly status: number;
}

/** The table's cells as rows, in the table's order (endpoint, visibility, caller). */
export function matrixRows<C extends string, V extends string>(table: MatrixTable<C, V>): MatrixRow<C, V>[] {
  const rows: MatrixRow<C, V>[] = [];
  for (const [endpoint, byVisibility] of Object.entries(table)) {
    for (const [visibility, byCaller] of Object.entries(byVisibility) as [V, Partial<Record<C, number>>][]) {
      for (const [caller, status] of Object.entries(byCaller) as [C, number][]) rows.push({ endpoint, caller, visibility, status });
    }
  }
  return rows;
}

export const rowName = (row: MatrixRow) => `${row.endpoint} as ${row.caller} on ${row.visibility} → ${row.status}`;

/**
 * One vitest case per cell of the table: `run` performs the row's call and answers the
 * status it got (it may assert more, e.g. the body of a 404).
 */
export function permissionMatrix<C extends string, V extends string>(table: MatrixTable<C, V>, run: (row: MatrixRow<C, V>) => Promise<number>): void {
  const rows = matrixRows(table);
  if (rows.length === 0) throw new Error('permissionMatrix: an empty table');
  it.each(rows.map((row) => [rowName(row), row] as const))('%s', async (_name, row) => {
    expect(await run(row)).toBe(row.status);
  });
}
