import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The commit graph of each repository (git's commit-graph file): one row per commit with its
// parents, generation number (git's topological level: 1 for a root, else 1 + the greatest of
// its parents'), committer time and the number of commits it reaches (`git rev-list --count`).
// Like repository_objects it is written by the commands, in the transaction that stores the
// commit (storeObjects), never by a projection: a rebuild leaves it alone. The history reads
// walk it by generation instead of parsing every commit of the history.
const statements = [
  `create table repository_commits (
    project_id integer not null,
    sha text not null check (sha ~ '^[0-9a-f]{40}$'),
    parents text[] not null,
    generation integer not null check (generation > 0),
    committer_time bigint not null,
    ancestors integer not null check (ancestors > 0),
    primary key (project_id, sha)
  )`,
  `create function repository_commits_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'repository_commits is append-only' using errcode = '55000';
    end
  $$`,
  `create trigger repository_commits_no_update before update on repository_commits
    for each row execute function repository_commits_immutable()`,
];

interface Stored {
  sha: string;
  parents: string[];
  time: number;
}

interface Node {
  parents: string[];
  generation: number;
  ancestors: number;
}

/** A max-heap of commits by generation: the walk below takes the highest first. */
function byGeneration(nodes: Map<string, Node>) {
  const heap: string[] = [];
  const gen = (i: number) => nodes.get(heap[i]!)!.generation;
  return {
    get size() {
      return heap.length;
    },
    push(sha: string) {
      heap.push(sha);
      for (let i = heap.length - 1; i > 0; ) {
        const up = (i - 1) >> 1;
        if (gen(up) >= gen(i)) break;
        [heap[up], heap[i]] = [heap[i]!, heap[up]!];
        i = up;
      }
    },
    pop(): string {
      const top = heap[0]!;
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        for (let i = 0; ; ) {
          const [l, r] = [2 * i + 1, 2 * i + 2];
          let best = i;
          if (l < heap.length && gen(l) > gen(best)) best = l;
          if (r < heap.length && gen(r) > gen(best)) best = r;
          if (best === i) break;
          [heap[best], heap[i]] = [heap[i]!, heap[best]!];
          i = best;
        }
      }
      return top;
    },
  };
}

/** How many commits `include` reach that `exclude` does not (`git rev-list --count include ^exclude`), by generation. */
function countBetween(nodes: Map<string, Node>, exclude: string[], include: string[]): number {
  const UNINTERESTING = 1;
  const INTERESTING = 2;
  const flags = new Map<string, number>();
  const queue = byGeneration(nodes);
  let interesting = 0;
  const mark = (sha: string, flag: number) => {
    if (!nodes.has(sha)) return;
    const had = flags.get(sha) ?? 0;
    if (had & UNINTERESTING || (flag === INTERESTING && had !== 0)) return;
    flags.set(sha, had | flag);
    if (had === 0) queue.push(sha);
    if (flag === INTERESTING) interesting++;
    else if (had & INTERESTING) interesting--;
  };
  for (const sha of include) mark(sha, INTERESTING);
  for (const sha of exclude) mark(sha, UNINTERESTING);
  let count = 0;
  while (interesting > 0 && queue.size > 0) {
    const sha = queue.pop();
    const flag = flags.get(sha)!;
    if (flag & UNINTERESTING) for (const parent of nodes.get(sha)!.parents) mark(parent, UNINTERESTING);
    else {
      interesting--;
      count++;
      for (const parent of nodes.get(sha)!.parents) mark(parent, INTERESTING);
    }
  }
  return count;
}

/** The graph rows of one project's stored commits, parents first. */
function graphOf(commits: Stored[]): { sha: string; parents: string[]; generation: number; committer_time: number; ancestors: number }[] {
  const stored = new Map(commits.map((c) => [c.sha, c]));
  const nodes = new Map<string, Node>();
  const rows = [];
  for (const root of commits) {
    const stack = [root.sha];
    while (stack.length > 0) {
      const sha = stack[stack.length - 1]!;
      if (nodes.has(sha)) {
        stack.pop();
        continue;
      }
      const commit = stored.get(sha)!;
      const pending = commit.parents.filter((p) => stored.has(p) && !nodes.has(p));
      if (pending.length > 0) {
        stack.push(...pending);
        continue;
      }
      stack.pop();
      const known = commit.parents.filter((p) => nodes.has(p));
      const generation = 1 + Math.max(0, ...known.map((p) => nodes.get(p)!.generation));
      const ancestors = known.length === 0 ? 1 : nodes.get(known[0]!)!.ancestors + 1 + (known.length > 1 ? countBetween(nodes, [known[0]!], known.slice(1)) : 0);
      nodes.set(sha, { parents: commit.parents, generation, ancestors });
      rows.push({ sha, parents: commit.parents, generation, committer_time: commit.time, ancestors });
    }
  }
  return rows;
}

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
  await backfill(db);
}

/**
 * Every commit stored so far (or one project's), a project at a time; parents and committer
 * time read from the commit's header lines (the header ends at the first blank line). A commit
 * already indexed is left as it is.
 */
export async function backfill(db: Kysely<any>, only?: number): Promise<void> {
  const { rows: projects } = await sql<{ project_id: number }>`
    select distinct project_id from repository_objects where type = 'commit' and (${only ?? null}::int is null or project_id = ${only ?? null}::int)`.execute(db);
  for (const { project_id } of projects) {
    const { rows } = await sql<{ sha: string; parents: string[]; time: string | null }>`
      select sha,
             array(select m.line[1] from regexp_matches(header, '^parent ([0-9a-f]{40})$', 'gn') with ordinality as m(line, n) order by m.n) as parents,
             (regexp_match(header, '^committer .* (-?[0-9]+) [-+][0-9]{4}$', 'n'))[1] as time
        from (select sha, encode(substring(content from 1 for coalesce(nullif(position(decode('0a0a', 'hex') in content), 0), length(content))), 'escape') as header
                from repository_objects where project_id = ${project_id} and type = 'commit') as commits`.execute(db);
    const graph = graphOf(rows.map((r) => ({ sha: r.sha, parents: r.parents, time: Number(r.time ?? 0) })));
    for (let i = 0; i < graph.length; i += 1000) {
      await db
        .insertInto('repository_commits')
        .values(graph.slice(i, i + 1000).map((row) => ({ project_id, ...row })))
        .onConflict((oc) => oc.columns(['project_id', 'sha']).doNothing())
        .execute();
    }
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw('drop table if exists repository_commits').execute(db);
  await sql.raw('drop function if exists repository_commits_immutable()').execute(db);
}
