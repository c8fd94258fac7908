import type { Context } from 'hono';
import { type RefWriter } from '../../commands/repository.js';
import { canAccessBranch, type ProtectedRef } from '../../domain/repository/push-access.js';
import { collaborationBranches } from '../../projections/merge-requests/collaboration.js';
import { protectedRefsOf, pushAccess } from '../../projections/repository/queries.js';
import { projectWebUrl } from '../entities/projects.js';
import { appContext } from '../kernel/context.js';
import type { ProjectScope } from '../kernel/scope.js';

/**
 * The caller as a writer of the project's refs, for the repository's and merge requests'
 * routes: the one push-access model (src/domain/repository/push-access.ts) that the ref
 * writes' branch check (src/commands/repository.ts, checkRefWrites) applies too.
 */

/** The caller as the branch check knows them; null for an anonymous caller. */
export function refWriter(c: Context, project: ProjectScope): RefWriter | null {
  const viewer = project.viewer;
  if (!viewer) return null;
  return {
    userId: viewer.id,
    isAdmin: viewer.isAdmin,
    role: project.role,
    canPushCode: project.can('push_code'),
    fullPath: project.row.path_with_namespace,
    membersUrl: `${projectWebUrl(appContext(c).config, project.row.path_with_namespace)}/-/project_members`,
    defaultBranch: project.row.default_branch,
  };
}

/**
 * refWriter, and for a caller without push_code the branches of the project (a fork) that
 * merge requests allowing collaboration let them push to (collaborationBranches): a
 * maintainer of the upstream on a contributor's branch.
 */
export async function collaboratingWriter(c: Context, project: ProjectScope): Promise<RefWriter | null> {
  const writer = refWriter(c, project);
  if (!writer || writer.canPushCode) return writer;
  return { ...writer, collaboration: await collaborationBranches(appContext(c).db, project.row.id, project.viewer) };
}

/** Gitlab::UserAccess for the caller: the protection rules, and whether they may push to / merge into a branch. */
export async function branchAccess(c: Context, project: ProjectScope): Promise<{ refs: ProtectedRef[]; may: (kind: 'push' | 'merge', branch: string) => boolean }> {
  const { db } = appContext(c);
  const writer = await collaboratingWriter(c, project);
  if (!writer) return { refs: await protectedRefsOf(db, project.row.id), may: () => false };
  const { refs, who } = await pushAccess(db, project.row.id, writer);
  return { refs, may: (kind, branch) => canAccessBranch(kind, branch, refs, who) };
}
