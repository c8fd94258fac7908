import { diffLines } from 'diff';
import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// Each stored commit's stats (GitLab's CommitStats: lines added and removed against its first
// parent, a root's against the empty tree), counted once as the commit is stored instead of on
// every read: the files whose entries differ, each pair of blobs diffed line by line by the
// `diff` library as UTF-8 text (a blob not stored reads as empty); a file moved unchanged (git
// diff's default rename detection) and a change of mode alone count no line. Like
// repository_commits it is written with the commit by the commands, never by a projection; a
// rebuild leaves it alone. The migration counts every commit already stored.
const statements = [
  `create table repository_commit_stats (
    project_id integer not null,
    commit_sha text not null,
    additions integer not null check (additions >= 0),
    deletions integer not null check (deletions >= 0),
    primary key (project_id, commit_sha)
  )`,
  `create function repository_commit_stats_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'repository_commit_stats is append-only' using errcode = '55000';
    end
  $$`,
  `create trigger repository_commit_stats_no_update before update on repository_commit_stats
    for each row execute function repository_commit_stats_immutable()`,
];

interface Entry {
  mode: string;
  name: string;
  sha: string;
}

function parseTree(content: Uint8Array): Entry[] {
  const entries: Entry[] = [];
  const text = new TextDecoder();
  for (let i = 0; i < content.length; ) {
    const space = content.indexOf(0x20, i);
    const nul = content.indexOf(0, space);
    entries.push({ mode: text.decode(content.subarray(i, space)), name: text.decode(content.subarray(space + 1, nul)), sha: Buffer.from(content.subarray(nul + 1, nul + 21)).toString('hex') });
    i = nul + 21;
  }
  return entries;
}

/** A commit's tree and parents, from its header lines. */
function parseHeader(content: Uint8Array): { tree: string; parents: string[] } {
  const header = Buffer.from(content).toString('utf8').split('\n\n', 1)[0]!.split('\n');
  return { tree: header.find((line) => line.startsWith('tree '))!.slice(5), parents: header.filter((line) => line.startsWith('parent ')).map((line) => line.slice(7)) };
}

const TREE = '40000';
const PAGE = 200;

/** The stats of every commit of a project's commit graph (exported for the test that compares them with the commands'). */
export async function backfill(db: Kysely<any>, projectId: number): Promise<void> {
  const trees = new Map<string, Entry[]>();
  const readTrees = async (shas: string[]) => {
    const missing = [...new Set(shas)].filter((sha) => !trees.has(sha));
    for (let i = 0; i < missing.length; i += 1000) {
      const { rows } = await sql<{ sha: string; content: Uint8Array }>`
        select sha, content from repository_objects where project_id = ${projectId} and type = 'tree' and sha = any(${missing.slice(i, i + 1000)}::text[])`.execute(db);
      for (const row of rows) trees.set(row.sha, parseTree(new Uint8Array(row.content)));
    }
  };
  /** The files that differ between two trees, path → blob on each side. */
  const differing = async (from: string | null, to: string) => {
    const before = new Map<string, string>();
    const after = new Map<string, string>();
    let level: { prefix: string; from: string | null; to: string | null }[] = from === to ? [] : [{ prefix: '', from, to }];
    while (level.length > 0) {
      await readTrees(level.flatMap((pair) => [pair.from, pair.to].filter((sha): sha is string => sha !== null)));
      const next: typeof level = [];
      for (const pair of level) {
        const old = new Map((pair.from === null ? [] : (trees.get(pair.from) ?? [])).map((e) => [e.name, e]));
        const now = new Map((pair.to === null ? [] : (trees.get(pair.to) ?? [])).map((e) => [e.name, e]));
        for (const name of new Set([...old.keys(), ...now.keys()])) {
          const [o, n] = [old.get(name), now.get(name)];
          if (o && n && o.sha === n.sha && o.mode === n.mode) continue;
          const path = `${pair.prefix}${name}`;
          if (o?.mode === TREE || n?.mode === TREE) next.push({ prefix: `${path}/`, from: o?.mode === TREE ? o.sha : null, to: n?.mode === TREE ? n.sha : null });
          if (o && o.mode !== TREE) before.set(path, o.sha);
          if (n && n.mode !== TREE) after.set(path, n.sha);
        }
      }
      level = next;
    }
    // Moved unchanged, or changed in mode alone: no line.
    const removed = new Set([...before].filter(([path]) => !after.has(path)).map(([, sha]) => sha));
    const added = new Set([...after].filter(([path]) => !before.has(path)).map(([, sha]) => sha));
    const pairs: [string | undefined, string | undefined][] = [];
    for (const path of new Set([...before.keys(), ...after.keys()])) {
      const [o, n] = [before.get(path), after.get(path)];
      if (o === n || (n === undefined && added.has(o!)) || (o === undefined && removed.has(n!))) continue;
      pairs.push([o, n]);
    }
    return pairs;
  };
  const { rows: commits } = await sql<{ sha: string; content: Uint8Array }>`
    select o.sha, o.content from repository_commits c join repository_objects o on o.project_id = c.project_id and o.sha = c.sha
     where c.project_id = ${projectId}`.execute(db);
  const headers = new Map(commits.map((row) => [row.sha, parseHeader(new Uint8Array(row.content))]));
  const shas = [...headers.keys()];
  const decoder = new TextDecoder();
  for (let p = 0; p < shas.length; p += PAGE) {
    const page = shas.slice(p, p + PAGE);
    const diffs = new Map<string, [string | undefined, string | undefined][]>();
    for (const sha of page) {
      const header = headers.get(sha)!;
      const first = header.parents[0];
      diffs.set(sha, await differing(first === undefined ? null : (headers.get(first)?.tree ?? null), header.tree));
    }
    const wanted = [...new Set([...diffs.values()].flat(2).filter((sha): sha is string => sha !== undefined))];
    const blobs = new Map<string, string>();
    for (let i = 0; i < wanted.length; i += 1000) {
      const { rows } = await sql<{ sha: string; content: Uint8Array }>`
        select sha, content from repository_objects where project_id = ${projectId} and sha = any(${wanted.slice(i, i + 1000)}::text[])`.execute(db);
      for (const row of rows) blobs.set(row.sha, decoder.decode(new Uint8Array(row.content)));
    }
    const counts = page.map((sha) => {
      let [additions, deletions] = [0, 0];
      for (const [o, n] of diffs.get(sha)!) {
        for (const change of diffLines(o === undefined ? '' : (blobs.get(o) ?? ''), n === undefined ? '' : (blobs.get(n) ?? ''))) {
          if (change.added) additions += change.count;
          else if (change.removed) deletions += change.count;
        }
      }
      return { additions, deletions };
    });
    await sql`
      insert into repository_commit_stats (project_id, commit_sha, additions, deletions)
      select ${projectId}, sha, additions, deletions
        from unnest(${page}::text[], ${counts.map((c) => c.additions)}::int[], ${counts.map((c) => c.deletions)}::int[]) as t(sha, additions, deletions)
      on conflict do nothing`.execute(db);
    if (trees.size > 100_000) trees.clear();
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
  const { rows: projects } = await sql<{ project_id: number }>`select distinct project_id from repository_commits order by project_id`.execute(db);
  for (const { project_id: projectId } of projects) await backfill(db, projectId);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(`drop table if exists repository_commit_stats`).execute(db);
  await sql.raw(`drop function if exists repository_commit_stats_immutable()`).execute(db);
}
