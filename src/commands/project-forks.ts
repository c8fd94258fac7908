import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { VISIBILITY_LEVEL, VISIBILITIES, type Visibility } from '../domain/access.js';
import { projects } from '../domain/projects/aggregate.js';
import type { ProjectSettings } from '../domain/projects/settings.js';
import type { RefWrite, RepositoryWrite } from '../domain/repository/decider.js';
import { currentSettings } from '../projections/application-settings/queries.js';
import type { NamespaceRow } from '../projections/groups/tables.js';
import type { ProjectRow } from '../projections/projects/tables.js';
import type { UserRow } from '../projections/users.js';
import { defaultBranchProtection } from './default-branch-protection.js';
import type { DeferredSpecs, Writer } from './kernel/context.js';
import { run } from './kernel/run.js';
import { createProject } from './projects.js';
import { deferredRefs } from './repository.js';

/**
 * Forks (GitLab 12.10's Projects::ForkService and UnlinkForkService). A fork is a new project
 * (its ProjectCreated, then ProjectForkLinked on its stream) whose repository starts with the
 * source's branches and tags: a BranchCreated or TagCreated on each of the fork's own ref
 * streams, and the source's objects copied into the fork's rows, all in the transaction
 * that creates it. See docs/forks.md.
 */

export interface ForkInput {
  readonly source: ProjectRow;
  /** The namespace the caller may create projects in (authorized by the route). */
  readonly namespace: NamespaceRow;
  readonly creator: Pick<UserRow, 'id' | 'projects_limit' | 'is_admin'>;
  readonly name?: string | undefined;
  readonly path?: string | undefined;
}

/** POST /projects/:id/fork: the new project's id. */
export async function forkProject(w: Writer, input: ForkInput): Promise<number> {
  const { source, namespace } = input;
  const s = source.settings as unknown as Partial<ProjectSettings>;
  const visibility = await allowedVisibility(w.ctx.db, source.visibility, namespace);
  const created = await createProject(w, {
    // ForkService#fork_new_project: the source's description, shared runners, builds access and git depth.
    settings: {
      name: input.name ?? source.name,
      path: input.path ?? source.path,
      description: source.description,
      visibility,
      shared_runners_enabled: source.shared_runners_enabled,
      ...(s.builds_access_level === undefined ? {} : { builds_access_level: s.builds_access_level }),
      ci_default_git_depth: s.ci_default_git_depth ?? 0,
    },
    namespace,
    creator: input.creator,
    initializeWithReadme: false,
    fork: { from: source.id, repository: (forkId) => forkedRepository(source.id, forkId) },
  });
  return created.state.id;
}

/**
 * ForkService#allowed_visibility_level: the lower of the source's and the namespace's
 * visibility, then Gitlab::VisibilityLevel.closest_allowed_level (the highest level at or
 * below it that the instance does not restrict; the level itself when none is left).
 */
async function allowedVisibility(db: Db, source: Visibility, namespace: NamespaceRow): Promise<Visibility> {
  const target = VISIBILITY_LEVEL[source] <= VISIBILITY_LEVEL[namespace.visibility] ? source : namespace.visibility;
  const restricted = (await currentSettings(db)).restricted_visibility_levels as string[];
  const allowed = VISIBILITIES.filter((v) => VISIBILITY_LEVEL[v] <= VISIBILITY_LEVEL[target] && !restricted.includes(v));
  return allowed.at(-1) ?? target;
}

/**
 * The fork's refs, decided in the transaction that creates it: the source's branches (its
 * default branch first, which the projects projection makes the fork's default branch, as
 * the first branch of an empty repository) and tags, at the same objects. Those objects are
 * copied into the fork's rows first. The source's refs are read `for share`: a push to the
 * source waits for the fork, so the copied objects hold every ref it copies.
 */
function forkedRepository(sourceId: number, forkId: number): DeferredSpecs[] {
  let written: RepositoryWrite | undefined;
  return [deferredRefs(forkId, async (trx) => (written = await copyRepository(trx, sourceId, forkId))), defaultBranchProtection(forkId, () => written)];
}

async function copyRepository(trx: Db, sourceId: number, forkId: number): Promise<RepositoryWrite> {
  const { rows: branches } = await sql<{ name: string; sha: string }>`
    select b.name, b.sha from repository_branches b where b.project_id = ${sourceId}
     order by b.name = (select default_branch from projects where id = ${sourceId}) desc, b.name for share of b`.execute(trx);
  const { rows: tags } = await sql<{ name: string; target: string; commit_sha: string; message: string | null }>`
    select name, target, commit_sha, message from repository_tags where project_id = ${sourceId} order by name for share`.execute(trx);
  await copyObjects(trx, sourceId, forkId);
  const commands: RefWrite[] = [
    ...branches.map((b): RefWrite => ({ type: 'CreateBranch', branch: b.name, sha: b.sha, commits: [] })),
    ...tags.map(
      (t): RefWrite => ({
        type: 'CreateTag',
        tag: t.name,
        target: t.target,
        commitSha: t.commit_sha,
        message: t.message,
        // Releases are the project's records, not the repository's: a fork has none.
        releaseDescription: null,
      }),
    ),
  ];
  return { type: 'UpdateRefs', commands };
}

/**
 * Every object of the source, and its rows of the commit graph, the per-path change index and
 * the commits' stats, into the fork's rows: INSERT … SELECT statements, no object leaving the
 * database. Every object, not only those the refs reach: the store holds nothing a refused
 * write left, and GitLab 12 shares a source's whole object pool with its forks the same way.
 */
async function copyObjects(trx: Db, sourceId: number, forkId: number) {
  await sql`insert into repository_objects (project_id, sha, type, size, content)
            select ${forkId}, sha, type, size, content from repository_objects where project_id = ${sourceId}
            on conflict do nothing`.execute(trx);
  await sql`insert into repository_commits (project_id, sha, parents, generation, committer_time, ancestors, first_parent_depth)
            select ${forkId}, sha, parents, generation, committer_time, ancestors, first_parent_depth from repository_commits where project_id = ${sourceId}
            on conflict do nothing`.execute(trx);
  await sql`insert into repository_path_changes (project_id, path, path_key, commit_sha, entry, follow)
            select ${forkId}, path, path_key, commit_sha, entry, follow from repository_path_changes where project_id = ${sourceId}
            on conflict do nothing`.execute(trx);
  await sql`insert into repository_commit_stats (project_id, commit_sha, additions, deletions)
            select ${forkId}, commit_sha, additions, deletions from repository_commit_stats where project_id = ${sourceId}
            on conflict do nothing`.execute(trx);
}

/** POST /projects/:id/fork/:forked_from_id (administrators): 409 "Project already forked" for a fork. */
export const linkFork = (w: Writer, projectId: number, forkedFromId: number) => run(w, projects, projectId, { type: 'LinkFork', forkedFromId });

/** DELETE /projects/:id/fork: whether there was a relation to remove. */
export async function unlinkFork(w: Writer, projectId: number): Promise<boolean> {
  const result = await run(w, projects, projectId, { type: 'UnlinkFork' });
  return result.events.length > 0;
}
