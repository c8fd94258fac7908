// TEMPORARY (replaced by the mergeengine branch's file)
import type { Db } from '../../database.js';
import { findCommit } from './queries.js';

async function ancestors(db: Db, projectId: number, sha: string): Promise<Set<string>> {
  const seen = new Set<string>();
  const queue = [sha];
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (seen.has(next)) continue;
    seen.add(next);
    const commit = await findCommit(db, projectId, next);
    if (commit) queue.push(...commit.parents);
  }
  return seen;
}

export async function mergeBase(db: Db, projectId: number, a: string, b: string): Promise<string | null> {
  const ofA = await ancestors(db, projectId, a);
  const queue = [b];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (ofA.has(next)) return next;
    if (seen.has(next)) continue;
    seen.add(next);
    const commit = await findCommit(db, projectId, next);
    if (commit) queue.push(...commit.parents);
  }
  return null;
}

export async function commitsBetween(db: Db, projectId: number, from: string | null, to: string): Promise<string[]> {
  const excluded = from ? await ancestors(db, projectId, from) : new Set<string>();
  return [...(await ancestors(db, projectId, to))].filter((sha) => !excluded.has(sha));
}
