/**
 * Who may see and do what in groups and projects: pure functions every area asks the same
 * way. Roles come from memberships (src/projections/access.ts reads them).
 */

// ───────────────────────────── Roles ─────────────────────────────

export const ACCESS = { NONE: 0, GUEST: 10, REPORTER: 20, DEVELOPER: 30, MAINTAINER: 40, OWNER: 50 } as const;
export type AccessLevel = 10 | 20 | 30 | 40 | 50;
export const GROUP_ACCESS_LEVELS: readonly AccessLevel[] = [10, 20, 30, 40, 50];
/** GitLab: owner (50) is a group role only; a project member at 50 is a 400. */
export const PROJECT_ACCESS_LEVELS: readonly AccessLevel[] = [10, 20, 30, 40];

export type MemberSourceType = 'Namespace' | 'Project';

// ───────────────────────────── Visibility ─────────────────────────────

export const VISIBILITIES = ['private', 'internal', 'public'] as const;
export type Visibility = (typeof VISIBILITIES)[number];
export const VISIBILITY_LEVEL: Record<Visibility, number> = { private: 0, internal: 10, public: 20 };

/** A child (subgroup, project) may not be more visible than its parent. */
export const allowedUnder = (child: Visibility, parent: Visibility) => VISIBILITY_LEVEL[child] <= VISIBILITY_LEVEL[parent];

/** The visibilities a viewer sees without membership. */
export function visibleWithoutMembership(viewer: Viewer | null): Visibility[] {
  if (!viewer) return ['public'];
  // GitLab: external users see internal resources only through membership.
  return viewer.external ? ['public'] : ['public', 'internal'];
}

// ───────────────────────────── Viewers ─────────────────────────────

export interface Viewer {
  readonly id: number;
  readonly isAdmin: boolean;
  readonly external: boolean;
  /**
   * The command clock's UTC date (YYYY-MM-DD): the viewer's memberships and the shares they
   * reach through are judged on it, as tokens are.
   */
  readonly today: string;
}

/**
 * A viewer's access level on a project or group is GitLab's project_authorizations /
 * max_member_access_for_user: the HIGHEST level over every way in (the project's own
 * membership, the memberships of its group and every ancestor, shares capped by their
 * group_access, the personal namespace's owner as maintainer), never the nearest one. One
 * SQL definition computes it (src/projections/access.ts); every policy below takes that
 * level as `role`.
 */

/** May the viewer see a group or project at all? Anything not visible answers 404. */
export function canRead(viewer: Viewer | null, visibility: Visibility, role: number | null): boolean {
  if (viewer?.isAdmin) return true;
  if (role !== null && role >= ACCESS.GUEST) return true;
  return visibleWithoutMembership(viewer).includes(visibility);
}

/** Group administration (settings, deletion, members): owners and administrators. */
export const canAdminGroup = (viewer: Viewer | null, role: number | null) => Boolean(viewer?.isAdmin) || (role ?? 0) >= ACCESS.OWNER;

/** Project administration (settings, archive, deletion): maintainers and administrators. */
export const canAdminProject = (viewer: Viewer | null, role: number | null) => Boolean(viewer?.isAdmin) || (role ?? 0) >= ACCESS.MAINTAINER;

/**
 * GitLab's project owner_access (rename, change visibility, archive, remove): the owner of the
 * personal namespace, an owner of the project's group or one of its ancestors (`groupRole`,
 * the viewer's level on the project's group), or an administrator. A project membership
 * never reaches owner.
 */
export function canOwnProject(viewer: Viewer | null, ownsPersonalNamespace: boolean, groupRole: number | null): boolean {
  return Boolean(viewer?.isAdmin) || ownsPersonalNamespace || (groupRole ?? 0) >= ACCESS.OWNER;
}

/** Who may manage members: maintainers of projects, owners of groups (or admins). */
export function canManageMembers(viewer: Viewer | null, sourceType: MemberSourceType, role: number | null): boolean {
  return sourceType === 'Namespace' ? canAdminGroup(viewer, role) : canAdminProject(viewer, role);
}

/**
 * GitLab's project_creation_level of a group. `noone` refuses administrators too (GroupPolicy
 * prevents create_projects whatever else enables it); otherwise administrators count as owners.
 */
export function canCreateProjectIn(viewer: Viewer | null, level: 'noone' | 'maintainer' | 'developer', role: number | null): boolean {
  if (level === 'noone') return false;
  if (viewer?.isAdmin) return true;
  return (role ?? 0) >= (level === 'developer' ? ACCESS.DEVELOPER : ACCESS.MAINTAINER);
}

/** GitLab's subgroup_creation_level of a group. */
export function canCreateSubgroupIn(viewer: Viewer | null, level: 'owner' | 'maintainer', role: number | null): boolean {
  if (viewer?.isAdmin) return true;
  return (role ?? 0) >= (level === 'owner' ? ACCESS.OWNER : ACCESS.MAINTAINER);
}
