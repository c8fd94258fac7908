import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// Each commit graph row's first-parent depth: how many commits its first-parent chain holds,
// itself included (`git rev-list --count --first-parent`): 1 for a root (or a commit whose
// first parent is not stored), else 1 + its first parent's. What `first_parent_depth` is to
// the commit list's `first_parent=true` X-Total, `ancestors` is to the plain one. Written by
// indexCommits with the commit (and copied with a fork's rows); the migration computes it for
// every row already stored, a project at a time in generation order (a first parent's
// generation is lower than its child's), then makes it NOT NULL so a writer that forgets it
// fails. repository_commits refuses UPDATE (0059's trigger): the trigger is dropped for the
// backfill and created again.
const PAGE = 1000;

export async function up(db: Kysely<any>): Promise<void> {
  await sql.raw('alter table repository_commits add column first_parent_depth integer check (first_parent_depth > 0)').execute(db);
  await sql.raw('drop trigger repository_commits_no_update on repository_commits').execute(db);
  await backfill(db);
  await sql.raw('alter table repository_commits alter column first_parent_depth set not null').execute(db);
  await sql
    .raw(
      `create trigger repository_commits_no_update before update on repository_commits
    for each row execute function repository_commits_immutable()`,
    )
    .execute(db);
}

/** Every row without a depth (or one project's), from its first parent's. */
export async function backfill(db: Kysely<any>, only?: number): Promise<void> {
  const { rows: projects } = await sql<{ project_id: number }>`
    select distinct project_id from repository_commits where first_parent_depth is null and (${only ?? null}::int is null or project_id = ${only ?? null}::int) order by project_id`.execute(db);
  for (const { project_id: projectId } of projects) {
    const { rows } = await sql<{ sha: string; first: string | null; depth: number | null }>`
      select sha, parents[1] as first, first_parent_depth as depth from repository_commits where project_id = ${projectId} order by generation, sha`.execute(db);
    const depths = new Map<string, number>();
    const computed: [string, number][] = [];
    for (const row of rows) {
      const depth = row.depth ?? 1 + (row.first === null ? 0 : (depths.get(row.first) ?? 0));
      depths.set(row.sha, depth);
      if (row.depth === null) computed.push([row.sha, depth]);
    }
    for (let i = 0; i < computed.length; i += PAGE) {
      const page = computed.slice(i, i + PAGE);
      await sql`
        update repository_commits c set first_parent_depth = t.depth
          from unnest(${page.map(([sha]) => sha)}::text[], ${page.map(([, depth]) => depth)}::int[]) as t(sha, depth)
         where c.project_id = ${projectId} and c.sha = t.sha`.execute(db);
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('alter table repository_commits drop column if exists first_parent_depth').execute(db);
}
