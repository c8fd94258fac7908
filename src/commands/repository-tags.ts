import { serviceError } from '../domain/errors.js';
import { tagRef, validBranchName, type RepositoryWrite } from '../domain/repository/decider.js';
import { cleanIdent, tagObject } from '../domain/repository/objects.js';
import { repository } from '../domain/repository/aggregate.js';
import { resolveCommit } from '../projections/repository/queries.js';
import type { Writer } from './kernel/context.js';
import { run } from './kernel/run.js';
import { checkRefWrites, committerOf, runRefs, storeObjects, type RefWriter } from './repository.js';

/**
 * The tags API's writes (GitLab 12's Tags::CreateService, Tags::DestroyService, and the
 * legacy tag release of Releases::Create/UpdateService), each one command on the
 * repository's stream, through the one ref check (`checkRefWrites`: Gitlab::Checks::TagCheck).
 */

export interface CreateTagInput {
  readonly projectId: number;
  readonly tag: string;
  /** A branch, tag or commit: the tag names its commit (Gitaly dereferences a tag's target). */
  readonly ref: string;
  /** Stripped; empty or absent makes a lightweight tag. */
  readonly message: string | undefined;
  readonly releaseDescription: string | undefined;
  readonly writer: RefWriter;
}

/**
 * POST /projects/:id/repository/tags: the name checked (Gitlab::GitRefValidator), then the
 * target (`Target <ref> is invalid`), then whether the tag exists, then the tag check. An
 * annotated tag is a tag object by the caller at the command's time (`+0000`), its message
 * as given, stripped (Gitaly's UserCreateTag writes no trailing newline of its own).
 */
export async function createTag(w: Writer, input: CreateTagInput): Promise<void> {
  const time = Math.floor(w.ctx.now().getTime() / 1000);
  await runRefs(w, input.projectId, async (trx): Promise<RepositoryWrite> => {
    const { projectId, tag } = input;
    if (!validBranchName(tag)) throw serviceError('Tag name invalid');
    const target = await resolveCommit(trx, projectId, input.ref);
    if (!target) throw serviceError(`Target ${input.ref} is invalid`);
    const message = input.message?.trim() || null;
    let sha = target.sha;
    if (message !== null) {
      const who = await committerOf(trx, input.writer.userId);
      const made = tagObject({ object: target.sha, type: 'commit', tag, tagger: { name: cleanIdent(who.name), email: cleanIdent(who.email), time, tzOffset: 0 }, message });
      await storeObjects(trx, projectId, [made]);
      sha = made.sha;
    }
    const command: RepositoryWrite = {
      type: 'CreateTag',
      tag,
      target: sha,
      commitSha: target.sha,
      message,
      releaseDescription: input.releaseDescription || null,
    };
    await checkRefWrites(trx, projectId, input.writer, [command]);
    return command;
  });
}

/** DELETE /projects/:id/repository/tags/:tag_name (Tags::DestroyService: the tag check decides; its release goes with it). */
export async function deleteTag(w: Writer, projectId: number, tag: string, writer: RefWriter) {
  return runRefs(w, projectId, async (trx): Promise<RepositoryWrite> => {
    const command: RepositoryWrite = { type: 'DeleteTag', tag };
    await checkRefWrites(trx, projectId, writer, [command]);
    return command;
  });
}

/** POST (`create`) or PUT /projects/:id/repository/tags/:tag_name/release: the tag's release notes. */
export async function saveTagRelease(w: Writer, projectId: number, input: { tag: string; description: string; create: boolean }) {
  return run(w, repository, { projectId, ref: tagRef(input.tag) }, { type: 'SaveTagRelease', ...input });
}
