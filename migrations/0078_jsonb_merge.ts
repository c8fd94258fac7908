import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// forgelog_jsonb_merge(jsonb): the objects of a group merged in the aggregate's order, later
// keys winning (`||` over the rows). An as_of view's build folds a run of profile edits into
// one with it (src/projections/rebuild.ts, keepCompacted): one concatenation a row, where
// jsonb_object_agg over jsonb_each would unnest every key and sort them again.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create aggregate forgelog_jsonb_merge(jsonb) (sfunc = jsonb_concat, stype = jsonb, initcond = '{}')`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop aggregate if exists forgelog_jsonb_merge(jsonb)`.execute(db);
}
