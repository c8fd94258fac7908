import { diffLines } from 'diff';

/**
 * A commit's `stats` (GitLab's CommitStats: git's numstat summed) from the files its diff
 * against its first parent changes — `before` and `after`, path → blob SHA, the files that
 * differ on either side — by the `diff` library's line diff of the blobs as UTF-8 text. A
 * file moved unchanged counts no line (git diff's default rename detection pairs it); a mode
 * change alone counts none either. Written with the commit (migration 0072's
 * `repository_commit_stats`), which keeps the same rule.
 */

export interface CommitStats {
  readonly additions: number;
  readonly deletions: number;
}

/** The files whose lines are counted: those not moved unchanged nor changed in mode only. */
function counted(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): [string | undefined, string | undefined][] {
  const removed = new Set([...before].filter(([path]) => !after.has(path)).map(([, sha]) => sha));
  const added = new Set([...after].filter(([path]) => !before.has(path)).map(([, sha]) => sha));
  const out: [string | undefined, string | undefined][] = [];
  for (const path of new Set([...before.keys(), ...after.keys()])) {
    const [old, now] = [before.get(path), after.get(path)];
    if (old === now) continue;
    if ((now === undefined && added.has(old!)) || (old === undefined && removed.has(now!))) continue;
    out.push([old, now]);
  }
  return out;
}

/** The blobs lineStats reads. */
export const statBlobs = (before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): string[] =>
  [...new Set(counted(before, after).flatMap((pair) => pair.filter((sha): sha is string => sha !== undefined)))];

const decoder = new TextDecoder();

/** `blobs`: the contents statBlobs named (a blob not there reads as empty). */
export function lineStats(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>, blobs: ReadonlyMap<string, Uint8Array>): CommitStats {
  const text = (sha: string | undefined) => {
    const content = sha === undefined ? undefined : blobs.get(sha);
    return content === undefined ? '' : decoder.decode(content);
  };
  let additions = 0;
  let deletions = 0;
  for (const [old, now] of counted(before, after)) {
    for (const change of diffLines(text(old), text(now))) {
      if (change.added) additions += change.count;
      else if (change.removed) deletions += change.count;
    }
  }
  return { additions, deletions };
}
