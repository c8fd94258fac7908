import { sql, type RawBuilder } from 'kysely';

/**
 * Many rows as one statement parameter: `json_populate_recordset` over the rows' JSON, for
 * the projectors' batch paths. PostgreSQL's JSON parsing is most of such a statement's cost,
 * so what the rows share goes once into the base record, and nulls are left out (a
 * missing key takes the base's value, and the base is null where the rows differ).
 *
 * `type` names a table (its row type) or a composite type; rows' keys name its columns,
 * other keys are ignored.
 */
export function recordset(type: string, rows: readonly Record<string, unknown>[]): RawBuilder<unknown> {
  const shared = new Map<string, unknown>();
  const first = rows[0];
  if (first && rows.length > 1) {
    for (const key of Object.keys(first)) {
      const value = first[key];
      if (value !== null && typeof value === 'object') continue;
      if (rows.every((row) => row[key] === value)) shared.set(key, value);
    }
  }
  const compact = rows.map((row) => {
    const values: Record<string, unknown> = {};
    for (const key in row) {
      const value = row[key];
      if (value !== null && !shared.has(key)) values[key] = value;
    }
    return values;
  });
  return sql`json_populate_recordset(json_populate_record(null::${sql.id(type)}, ${JSON.stringify(Object.fromEntries(shared))}::json), ${JSON.stringify(compact)}::json)`;
}
