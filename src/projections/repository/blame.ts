import { diffArrays } from 'diff';
import type { Db } from '../../database/database.js';
import { findCommits, pathVersions, readBlobs, type CommitView } from './queries.js';

/** A run of consecutive lines that one commit last changed (GitLab's Gitlab::Blame#groups). */
export interface BlameRange {
  readonly commit: CommitView;
  readonly lines: string[];
}

/** A blob's lines as git blame counts them: split at newlines, the newline that ends the last one not a line of its own. */
const linesOf = (content: Uint8Array) => {
  const text = Buffer.from(content).toString('utf8');
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
};

/**
 * `git blame head -- path`: each line of the file at `head` with the commit that last changed
 * it, grouped into runs. The file's versions are the commits its simplified log shows with
 * the entry each left (pathVersions, on the per-path change index); each version is diffed
 * with the next older one, and the lines it added are its own; the lines left at the oldest
 * version — or at the one that created the file after a deletion — are that version's.
 * Reads the path's history, never the repository's trees. A merge that changed the path is
 * diffed with the next older version of either side (git diffs it with each parent).
 */
export async function blame(db: Db, projectId: number, head: CommitView, path: string, content: Uint8Array): Promise<BlameRange[]> {
  const versions = await pathVersions(db, projectId, [head.sha], path, {});
  const entries = new Map(versions.map((version) => [version.sha, version.entry]));
  const lived: string[] = [];
  for (const { sha, entry } of versions) {
    if (entry === null) break;
    lived.push(sha);
  }
  const blobs = await readBlobs(db, projectId, [...new Set(lived.map((sha) => entries.get(sha)!))]);
  const final = linesOf(content);
  const owner: (string | undefined)[] = new Array(final.length);
  // Each line not yet owned, by its position in the version being looked at.
  let tracked = final.map((_, line) => ({ line, at: line }));
  for (const [i, sha] of lived.entries()) {
    if (tracked.length === 0) break;
    const older = lived[i + 1];
    if (older === undefined) {
      for (const { line } of tracked) owner[line] = sha;
      break;
    }
    const newer = linesOf(blobs.get(entries.get(sha)!) ?? new Uint8Array());
    // Where each line of the newer version was in the older one (undefined: added here).
    const origin: (number | undefined)[] = new Array(newer.length);
    let [o, n] = [0, 0];
    for (const part of diffArrays(linesOf(blobs.get(entries.get(older)!) ?? new Uint8Array()), newer)) {
      const count = part.count ?? part.value.length;
      if (part.added) n += count;
      else if (part.removed) o += count;
      else for (let k = 0; k < count; k++) origin[n++] = o++;
    }
    const next: typeof tracked = [];
    for (const { line, at } of tracked) {
      const was = origin[at];
      if (was === undefined) owner[line] = sha;
      else next.push({ line, at: was });
    }
    tracked = next;
  }
  const fallback = lived[lived.length - 1] ?? head.sha;
  const commits = new Map((await findCommits(db, projectId, [...new Set([...owner.map((sha) => sha ?? fallback)])])).map((commit) => [commit.sha, commit]));
  const ranges: { commit: CommitView; lines: string[] }[] = [];
  for (const [line, text] of final.entries()) {
    const commit = commits.get(owner[line] ?? fallback)!;
    const last = ranges[ranges.length - 1];
    if (last?.commit.sha === commit.sha) last.lines.push(text);
    else ranges.push({ commit, lines: [text] });
  }
  return ranges;
}
