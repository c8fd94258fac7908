import type { Viewer } from '../access.js';

/** GitLab's NamespacePolicy (12.10): a personal namespace (groups answer to GroupPolicy). */

export interface NamespaceSubject {
  readonly kind: 'namespace';
  readonly viewer: Viewer | null;
  readonly ownerId: number | null;
  /** GitLab's can_create_personal_project: the viewer's User#can_create_project? (projects_limit left). */
  readonly canCreatePersonalProject: boolean;
}

type Rule = (s: NamespaceSubject) => boolean;

const ownerOrAdmin: Rule = (s) => s.viewer !== null && (s.viewer.isAdmin || s.viewer.id === s.ownerId);

export const NAMESPACE_POLICY = {
  create_projects: (s) => ownerOrAdmin(s) && s.canCreatePersonalProject,
} as const satisfies Record<string, Rule>;

export type NamespaceAbility = keyof typeof NAMESPACE_POLICY;
