import { GROUP_POLICY, type GroupAbility, type GroupSubject } from './group.js';
import { GROUP_MEMBER_POLICY, PROJECT_MEMBER_POLICY, type GroupMemberAbility, type GroupMemberSubject, type ProjectMemberAbility, type ProjectMemberSubject } from './members.js';
import { NAMESPACE_POLICY, type NamespaceAbility, type NamespaceSubject } from './namespace.js';
import { PROJECT_POLICY, type ProjectAbility, type ProjectSubject } from './project.js';

/**
 * The one question every area asks: may the viewer do `ability` (GitLab's name) to `subject`?
 * GitLab's `can?(user, ability, subject)`. The subject carries the viewer, their level from the
 * one authorization model (src/projections/access.ts) and the facts the rules read.
 */

export type Subject = ProjectSubject | GroupSubject | NamespaceSubject | GroupMemberSubject | ProjectMemberSubject;

interface Abilities {
  project: ProjectAbility;
  group: GroupAbility;
  namespace: NamespaceAbility;
  group_member: GroupMemberAbility;
  project_member: ProjectMemberAbility;
}

const POLICIES = {
  project: PROJECT_POLICY,
  group: GROUP_POLICY,
  namespace: NAMESPACE_POLICY,
  group_member: GROUP_MEMBER_POLICY,
  project_member: PROJECT_MEMBER_POLICY,
} as const;

export function can<S extends Subject>(subject: S, ability: Abilities[S['kind']]): boolean {
  const policy = POLICIES[subject.kind] as Record<string, (s: S) => boolean>;
  return policy[ability]!(subject);
}
