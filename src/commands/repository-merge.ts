import type { Db } from '../database/database.js';
import { notAcceptable } from '../domain/errors.js';
import { cleanIdent, commit, type Signature } from '../domain/repository/objects.js';
import { commitsBetween } from '../projections/repository/history.js';
import { mergeCommits } from '../projections/repository/merges.js';
import { storeObjects } from './repository.js';

/**
 * Merges of two commits of a project's repository, for merge requests: whether they merge
 * (GitLab's `can_be_merged?`), the merge commit (Gitaly's UserMergeBranch: parents
 * [target, source], the tree of the three-way merge against the merge base) and the
 * squash commit before it, and the diverged commits count. Functions of the command's
 * transaction, as `commitFiles`: the objects are stored in it, the ref move (the target's
 * BranchUpdated) is the caller's command. See docs/repository.md, "History and merges".
 */

export interface Person {
  readonly name: string;
  readonly email: string;
}

export interface MergeCommitInput {
  /** The target branch's head (the merge commit's first parent). */
  readonly targetSha: string;
  /** The source branch's head (the second parent, or what the squash commit squashes). */
  readonly sourceSha: string;
  /** The merge commit's whole message (GitLab's format is the caller's). */
  readonly message: string;
  /** The merge commit's author and committer (GitLab: the user who merges, both). */
  readonly author: Person;
  readonly committer: Person;
  /** Seconds since the epoch (the command's time; zone +0000). */
  readonly time: number;
  /**
   * Squash first (MergeRequests::SquashService / Gitaly UserSquash): one commit on the
   * target's head with the source's changes since the merge base, then merged. The squash
   * commit's author is `author` here (GitLab: the merge request's author), its committer
   * the merge's committer. GitLab skips the squash of a single commit (uses the source
   * head): the caller decides.
   */
  readonly squash?: { readonly message: string; readonly author?: Person } | undefined;
}

export interface MergeCommitResult {
  /** The merge commit, to move the target branch to. */
  readonly sha: string;
  /** The squash commit (the merge commit's second parent) when squashed, else null. */
  readonly squashSha: string | null;
}

const sign = (who: Person, time: number): Signature => ({ name: cleanIdent(who.name), email: cleanIdent(who.email), time, tzOffset: 0 });

/**
 * Writes the merge of `sourceSha` into `targetSha` in the transaction: the merged blobs and
 * trees and the merge commit (parents [target, source], or [target, squash commit]).
 * Throws notAcceptable('Branch cannot be merged') (406) on a conflict, writing nothing, and
 * notFound('Commit') when either SHA is not a commit of the project.
 */
export async function createMergeCommit(trx: Db, projectId: number, input: MergeCommitInput): Promise<MergeCommitResult> {
  const merged = await mergeCommits(trx, projectId, input.sourceSha, input.targetSha);
  if (merged.conflicts.length > 0 || merged.root === null) throw notAcceptable('Branch cannot be merged');
  const { root, trees } = merged;
  const committer = sign(input.committer, input.time);
  let second = input.sourceSha;
  let squashSha: string | null = null;
  const objects = [...merged.blobs, ...trees];
  if (input.squash) {
    // The source's changes applied on the target: the merge's own tree, with the target as only parent.
    const squashed = commit({ tree: root, parents: [input.targetSha], author: sign(input.squash.author ?? input.author, input.time), committer, message: input.squash.message });
    objects.push(squashed);
    second = squashSha = squashed.sha;
  }
  const made = commit({ tree: root, parents: [input.targetSha, second], author: sign(input.author, input.time), committer, message: input.message });
  objects.push(made);
  await storeObjects(trx, projectId, objects);
  return { sha: made.sha, squashSha };
}

/**
 * GitLab's `diverged_commits_count`: the commits of the target not in the source
 * (`git rev-list --count source..target`).
 */
export async function divergedCommitsCount(db: Db, projectId: number, sourceSha: string, targetSha: string): Promise<number> {
  return (await commitsBetween(db, projectId, sourceSha, targetSha)).length;
}
