import { GROUP_POLICY, type GroupSubject } from './group.js';
import { PROJECT_POLICY, type ProjectSubject } from './project.js';

/**
 * GitLab's GroupMemberPolicy and ProjectMemberPolicy (12.10): a membership, or an access
 * request, of `userId` in a group or project. Their last_owner / target_is_owner rules need
 * the source's members: the members decider holds them (403 there).
 */

export interface GroupMemberSubject {
  readonly kind: 'group_member';
  readonly group: GroupSubject;
  readonly userId: number;
}

export interface ProjectMemberSubject {
  readonly kind: 'project_member';
  readonly project: ProjectSubject;
  readonly userId: number;
}

/** is_target_user / target_is_self: a signed-in user's own membership or request. */
const ownMembership = (viewer: GroupSubject['viewer'], userId: number) => viewer !== null && viewer.id === userId;

export const GROUP_MEMBER_POLICY = {
  destroy_group_member: (s) => s.group.viewer !== null && (GROUP_POLICY.admin_group_member(s.group) || ownMembership(s.group.viewer, s.userId)),
} as const satisfies Record<string, (s: GroupMemberSubject) => boolean>;

export const PROJECT_MEMBER_POLICY = {
  destroy_project_member: (s) =>
    s.project.viewer !== null && (PROJECT_POLICY.admin_project_member(s.project) || ownMembership(s.project.viewer, s.userId)),
} as const satisfies Record<string, (s: ProjectMemberSubject) => boolean>;

export type GroupMemberAbility = keyof typeof GROUP_MEMBER_POLICY;
export type ProjectMemberAbility = keyof typeof PROJECT_MEMBER_POLICY;
