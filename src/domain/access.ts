/**
 * The vocabulary of access: roles, visibilities and the viewer. Who may do what is the
 * policy's (src/domain/policy/). A viewer's level on a project or group is GitLab's
 * project_authorizations / max_member_access_for_user: the HIGHEST level over every way in
 * (the project's own membership, the memberships of its group and every ancestor, shares
 * capped by their group_access, the personal namespace's owner as maintainer), never the
 * nearest one; one SQL definition computes it (src/projections/access.ts) and the policy
 * takes it as a subject's `role`.
 */

import { type DomainError, invalid } from './errors.js';

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

/**
 * Gitlab::VisibilityLevel.allowed_for?: an administrator may use any level, anybody else
 * none of the levels the instance restricts (application setting restricted_visibility_levels).
 * The refusal is the model error the create and update services add (deny_visibility_level).
 */
export function restrictedVisibilityError(level: Visibility, restricted: readonly unknown[], isAdmin: boolean): DomainError | undefined {
  if (isAdmin || !restricted.includes(level)) return undefined;
  return invalid({ visibility_level: [`${level.charAt(0).toUpperCase()}${level.slice(1)} has been restricted by your GitLab administrator`] });
}

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
