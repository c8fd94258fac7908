import type { UsersReadTables } from './users.js';

/** The read tables of every projection, gathered for the Kysely `Database` type. */
export interface ReadTables extends UsersReadTables {}
