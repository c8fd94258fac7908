import type { ColumnType } from 'kysely';

/**
 * Column types every area's table types share: a timestamp reads as a Date (node-postgres
 * and the PGlite dialect both parse timestamptz) and is written as an ISO 8601 string.
 */
export type Timestamp = ColumnType<Date, string, string>;
export type NullableTimestamp = ColumnType<Date | null, string | null, string | null>;
