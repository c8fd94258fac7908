import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

// Frozen in time: migrations never import application code.
// The per-path change index of each repository: a row per path a commit changes against its
// first parent (files and the directories above them; a root commit changes every path of its
// tree), with the SHA of the entry after the commit (null where it removed it) and git's
// history simplification for the path (`follow`: null when the path differs from every parent
// too, so `git log -- path` shows the commit; else the 1-based index of the first parent the
// path is the same as, the only one the log walks on to). Like repository_commits it is written with the commit by
// the commands, never by a projection; a rebuild leaves it alone. The last commit of a path
// and a log filtered by path read it instead of the trees of every commit of the history.
// The migration fills it in for every commit already stored.
const statements = [
  // Keyed by the SHA-256 of the path's UTF-8 (path_key, computed by the writer), not the path:
  // a path may be longer than a btree entry can hold (git takes 4,096 bytes and more).
  `create table repository_path_changes (
    project_id integer not null,
    path text not null,
    path_key bytea not null check (length(path_key) = 32),
    commit_sha text not null,
    entry text check (entry ~ '^[0-9a-f]{40}$'),
    follow smallint check (follow > 1),
    primary key (project_id, path_key, commit_sha)
  )`,
  `create index repository_path_changes_entry on repository_path_changes (project_id, entry, path_key)`,
  `create index repository_path_changes_commit on repository_path_changes (project_id, commit_sha)`,
  `create function repository_path_changes_immutable() returns trigger language plpgsql as $$
    begin
      raise exception 'repository_path_changes is append-only' using errcode = '55000';
    end
  $$`,
  `create trigger repository_path_changes_no_update before update on repository_path_changes
    for each row execute function repository_path_changes_immutable()`,
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

/** The rows of every commit of a project's commit graph (exported for the test that compares them with the commands'). */
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
  const differing = async (from: string | null, to: string): Promise<Map<string, string | null>> => {
    const changed = new Map<string, string | null>();
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
          changed.set(path, n?.sha ?? null);
          if (o?.mode === '40000' || n?.mode === '40000') next.push({ prefix: `${path}/`, from: o?.mode === '40000' ? o.sha : null, to: n?.mode === '40000' ? n.sha : null });
        }
      }
      level = next;
    }
    return changed;
  };
  const { rows: commits } = await sql<{ sha: string; content: Uint8Array }>`
    select o.sha, o.content from repository_commits c join repository_objects o on o.project_id = c.project_id and o.sha = c.sha
     where c.project_id = ${projectId}`.execute(db);
  const headers = new Map(commits.map((row) => [row.sha, parseHeader(new Uint8Array(row.content))]));
  for (const [sha, header] of headers) {
    const treeOf = (parent: string) => headers.get(parent)?.tree ?? null;
    const [first, ...others] = header.parents;
    const changed = await differing(first === undefined ? null : treeOf(first), header.tree);
    const follow = new Map<string, number>();
    for (const [i, other] of others.entries()) {
      const against = await differing(treeOf(other), header.tree);
      for (const path of changed.keys()) if (!follow.has(path) && !against.has(path)) follow.set(path, i + 2);
    }
    const rows = [...changed];
    for (let i = 0; i < rows.length; i += 1000) {
      const page = rows.slice(i, i + 1000);
      await sql`
        insert into repository_path_changes (project_id, path, path_key, commit_sha, entry, follow)
        select ${projectId}, path, decode(path_key, 'hex'), ${sha}, entry, follow
          from unnest(${page.map(([path]) => path)}::text[], ${page.map(([path]) => createHash('sha256').update(path, 'utf8').digest('hex'))}::text[], ${page.map(([, entry]) => entry)}::text[], ${page.map(([path]) => follow.get(path) ?? null)}::smallint[]) as t(path, path_key, entry, follow)`.execute(db);
    }
  }
}

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db);
  const { rows: projects } = await sql<{ project_id: number }>`select distinct project_id from repository_commits order by project_id`.execute(db);
  for (const { project_id: projectId } of projects) await backfill(db, projectId);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql.raw(`drop table if exists repository_path_changes`).execute(db);
  await sql.raw(`drop function if exists repository_path_changes_immutable()`).execute(db);
}
