import { ACCESS, visibleWithoutMembership, type Viewer, type Visibility } from '../access.js';
import type { ProjectCreationLevel, SubgroupCreationLevel } from '../groups/settings.js';

/**
 * GitLab's GroupPolicy (12.10): each ability a group grants, and the rule that grants it.
 * Abilities keep GitLab's names; `can(subject, ability)` (./can.ts) asks them.
 */

/** What the policy reads of a group (a `namespaces` row is one). */
export interface PolicyGroup {
  readonly visibility: Visibility;
  readonly request_access_enabled: boolean;
  readonly project_creation_level: ProjectCreationLevel;
  readonly subgroup_creation_level: SubgroupCreationLevel;
}

export interface GroupSubject {
  readonly kind: 'group';
  readonly viewer: Viewer | null;
  /** The viewer's level on the group (src/projections/access.ts), null for none. */
  readonly role: number | null;
  readonly group: PolicyGroup;
  /**
   * GitLab's has_projects: the viewer may read a project inside the group. A query, so the
   * resolver looks it up only when nothing cheaper lets the viewer read the group (undefined:
   * not looked up, counts as no).
   */
  readonly hasProjects?: boolean;
}

type Rule = (s: GroupSubject) => boolean;

// ───────────────────────────── Conditions (GitLab's names) ─────────────────────────────

/** GitLab's Group#max_member_access_for_user: administrators are owners of every group. */
const accessLevel = (s: GroupSubject) => (s.viewer?.isAdmin ? ACCESS.OWNER : (s.role ?? ACCESS.NONE));
const atLeast = (level: number): Rule => (s) => accessLevel(s) >= level;

const guest = atLeast(ACCESS.GUEST);
const reporter = atLeast(ACCESS.REPORTER);
const developer = atLeast(ACCESS.DEVELOPER);
const maintainer = atLeast(ACCESS.MAINTAINER);
const owner = atLeast(ACCESS.OWNER);

/** public_group | logged_in_viewable (internal, for signed-in users who are not external): view_globally. */
const viewGlobally: Rule = (s) => visibleWithoutMembership(s.viewer).includes(s.group.visibility);

const readGroup: Rule = (s) => viewGlobally(s) || guest(s) || s.hasProjects === true;

// ───────────────────────────── Abilities ─────────────────────────────

export const GROUP_POLICY = {
  read_group: readGroup,
  /** GitLab 12's members API finds the group with read_group; later GroupPolicy names it. */
  read_group_member: readGroup,

  /** GroupPolicy's reporter rule (12.2+): the group-level list of container repositories. */
  read_container_image: atLeast(ACCESS.REPORTER),

  admin_group: owner,
  admin_group_member: owner,
  change_visibility_level: owner,
  /** Group SAML SSO and the SCIM token (GitLab EE: group_saml_available & admin_group); the licence and a top-level group are the route's to check. */
  admin_group_saml: owner,

  /** project_creation_level: maintainers, or developers too; `noone` prevents it for everybody, administrators included. */
  create_projects: (s) =>
    s.group.project_creation_level !== 'noone' && (maintainer(s) || (developer(s) && s.group.project_creation_level === 'developer')),
  /** subgroup_creation_level: owners, or maintainers too. */
  create_subgroup: (s) => owner(s) || (maintainer(s) && s.group.subgroup_creation_level === 'maintainer'),

  /**
   * Prevented without request_access_enabled, unless the group is viewable globally, and for
   * anybody with access (administrators included). API::AccessRequests authenticates first.
   */
  request_access: (s) => s.viewer !== null && s.group.request_access_enabled && viewGlobally(s) && accessLevel(s) === ACCESS.NONE,

  // EE's GroupPolicy (12.x), without its `epics_available` condition: the routes ask the plan
  // first (authorize_epics_feature!), as GitLab's API does. EpicPolicy delegates to the group.
  read_epic: readGroup,
  create_epic: reporter,
  admin_epic: reporter,
  update_epic: reporter,
  destroy_epic: owner,
} as const satisfies Record<string, Rule>;

export type GroupAbility = keyof typeof GROUP_POLICY;
