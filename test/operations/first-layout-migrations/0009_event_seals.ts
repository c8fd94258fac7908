import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// Seals form one chain over consecutive ranges of the log: two sealers racing past the
// advisory lock (or a bug) must not write the same range twice or fork the chain.
const statements = [
  `create unique index event_seals_first_position on event_seals (first_position)`,
  `create unique index event_seals_previous_seal_hash on event_seals (previous_seal_hash)`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop index if exists event_seals_first_position, event_seals_previous_seal_hash').execute(db);
}
