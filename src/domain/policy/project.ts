import { ACCESS, visibleWithoutMembership, type Viewer, type Visibility } from '../access.js';
import type { ProjectSettings } from '../projects/settings.js';

/**
 * GitLab's ProjectPolicy (12.10): each ability a project grants, and the rule that grants it.
 * Abilities keep GitLab's names; `can(subject, ability)` (./can.ts) asks them.
 */

/** What the policy reads of a project (a `projects` row is one). */
export interface PolicyProject {
  readonly visibility: Visibility;
  readonly archived: boolean;
  readonly request_access_enabled: boolean;
  readonly container_registry_enabled: boolean;
  readonly settings: Pick<ProjectSettings, `${ProjectFeature}_access_level`>;
}

/** GitLab's ProjectFeature::FEATURES that carry an access level (pages aside: its `public` is another matter). */
export type ProjectFeature = 'issues' | 'merge_requests' | 'wiki' | 'snippets' | 'builds' | 'repository';

export interface ProjectSubject {
  readonly kind: 'project';
  readonly viewer: Viewer | null;
  /** The viewer's level on the project (src/projections/access.ts; GitLab's team_access_level), null for none. */
  readonly role: number | null;
  readonly project: PolicyProject;
  /** The owner of the personal namespace holding the project; null in a group. */
  readonly personalOwnerId: number | null;
}

type Rule = (s: ProjectSubject) => boolean;

// ───────────────────────────── Conditions (GitLab's names) ─────────────────────────────

const admin: Rule = (s) => Boolean(s.viewer?.isAdmin);
const atLeast = (level: number): Rule => (s) => (s.role ?? ACCESS.NONE) >= level;

/**
 * GitLab: the personal namespace's owner, or `project.group.has_owner?` — an owner of the
 * project's group or an ancestor. Only that reaches 50 on a project: a project membership and
 * a share (capped by its group_access) stop at maintainer.
 */
const owner: Rule = (s) => (s.viewer !== null && s.personalOwnerId === s.viewer.id) || atLeast(ACCESS.OWNER)(s);

const ownerAccess: Rule = (s) => owner(s) || admin(s);
const maintainerAccess: Rule = (s) => ownerAccess(s) || atLeast(ACCESS.MAINTAINER)(s);
const developerAccess: Rule = (s) => ownerAccess(s) || atLeast(ACCESS.DEVELOPER)(s);
const reporterAccess: Rule = (s) => ownerAccess(s) || atLeast(ACCESS.REPORTER)(s);
/** guest: a member at any level (team_member?). */
const guest: Rule = atLeast(ACCESS.GUEST);

/**
 * public_access | public_user_access: a public project for anyone, an internal one for signed-in
 * users who are not external — the same set the list filters use (visibleWithoutMembership).
 */
const openToViewer: Rule = (s) => visibleWithoutMembership(s.viewer).includes(s.project.visibility);
/** public_user_access: open to the viewer, and the viewer is signed in. */
const publicUserAccess: Rule = (s) => s.viewer !== null && openToViewer(s);

const archived: Rule = (s) => s.project.archived;

/** ~container_registry_disabled: the project's container registry is on (for administrators too). */
const registryEnabled: Rule = (s) => s.project.container_registry_enabled;

/**
 * ProjectFeature::PRIVATE_FEATURES_MIN_ACCESS_LEVEL (12.10): the level a member needs to use a
 * private feature — reporter for merge requests, guest for the rest.
 */
export const PRIVATE_FEATURE_MIN_ACCESS_LEVEL: Readonly<Record<ProjectFeature, number>> = {
  issues: ACCESS.GUEST,
  merge_requests: ACCESS.REPORTER,
  wiki: ACCESS.GUEST,
  snippets: ACCESS.GUEST,
  builds: ACCESS.GUEST,
  repository: ACCESS.GUEST,
};

/**
 * GitLab's ProjectFeature#feature_available?: a disabled feature is off for everyone, an
 * enabled one on, a private one on for administrators (full_private_access?) and members at
 * the feature's minimum level (`team.member?(user, min)`). The project entity's
 * `*_enabled` fields answer it; the `~<feature>_disabled` conditions of the policy are it.
 * Its SQL form for lists is `featureAvailableTo` (src/projections/projects/queries.ts).
 */
export function featureAvailable(s: ProjectSubject, feature: ProjectFeature): boolean {
  switch (s.project.settings[`${feature}_access_level`]) {
    case 'disabled':
      return false;
    case 'private':
      return admin(s) || atLeast(PRIVATE_FEATURE_MIN_ACCESS_LEVEL[feature])(s);
    default:
      return true;
  }
}

/** ~(builds_disabled | repository_disabled). */
const cicdAvailable: Rule = (s) => featureAvailable(s, 'builds') && featureAvailable(s, 'repository');
/** ~repository_disabled. */
const repositoryAvailable: Rule = (s) => featureAvailable(s, 'repository');
/** ~(merge_requests_disabled | repository_disabled). */
const mergeRequestsAvailable: Rule = (s) => featureAvailable(s, 'merge_requests') && featureAvailable(s, 'repository');

// ───────────────────────────── Abilities ─────────────────────────────

export const PROJECT_POLICY = {
  // guest_access | public_access
  read_project: (s) => ownerAccess(s) || guest(s) || openToViewer(s),
  read_project_member: (s) => ownerAccess(s) || guest(s) || openToViewer(s),

  // maintainer_access
  admin_project: maintainerAccess,
  admin_project_member: maintainerAccess,

  // owner_access: GitLab's API asks rename_project for a new name, change_visibility_level for a visibility
  change_namespace: ownerAccess,
  change_visibility_level: ownerAccess,
  rename_project: ownerAccess,
  archive_project: ownerAccess,
  remove_project: ownerAccess,
  remove_fork_project: ownerAccess,
  /** reporter_access or public_user_access (a signed-in user who sees a public or internal project); off with the repository. */
  fork_project: (s) => (reporterAccess(s) || publicUserAccess(s)) && repositoryAvailable(s),

  /**
   * Enabled by public_user_access; prevented for owners, administrators, members (a member of
   * the group has a level on its projects), without request_access_enabled, and on an archived
   * project. GitLab also prevents it for requesters of the group, which is not looked up here.
   */
  request_access: (s) => publicUserAccess(s) && !ownerAccess(s) && !guest(s) && s.project.request_access_enabled && !archived(s),

  // Milestones and labels (GitLab 12): guest_access or public_access reads them; developers
  // administer milestones, reporters labels; read-only on an archived project
  // (READONLY_FEATURES_WHEN_ARCHIVED). GitLab also turns both off when issues and merge
  // requests are both disabled, which forgelog's project features do not model yet.
  read_milestone: (s) => ownerAccess(s) || guest(s) || openToViewer(s),
  admin_milestone: (s) => developerAccess(s) && !archived(s),
  read_label: (s) => ownerAccess(s) || guest(s) || openToViewer(s),
  admin_label: (s) => reporterAccess(s) && !archived(s),

  // Environments and deployments: reporters read, developers write, maintainers administer;
  // off with builds or the repository, read-only on an archived project (READONLY_FEATURES_WHEN_ARCHIVED).
  read_environment: (s) => reporterAccess(s) && cicdAvailable(s),
  create_environment: (s) => developerAccess(s) && cicdAvailable(s) && !archived(s),
  update_environment: (s) => developerAccess(s) && cicdAvailable(s) && !archived(s),
  /** GitLab 12's DELETE asks update_environment; later ProjectPolicy names it, for the same roles. EnvironmentPolicy adds "stopped". */
  destroy_environment: (s) => developerAccess(s) && cicdAvailable(s) && !archived(s),
  /** EnvironmentPolicy stop_with_update_allowed: no job here is a stop action, so stopping is updating. */
  stop_environment: (s) => developerAccess(s) && cicdAvailable(s) && !archived(s),
  admin_environment: (s) => maintainerAccess(s) && cicdAvailable(s) && !archived(s),
  read_deployment: (s) => reporterAccess(s) && cicdAvailable(s),
  create_deployment: (s) => developerAccess(s) && cicdAvailable(s) && !archived(s),
  update_deployment: (s) => developerAccess(s) && cicdAvailable(s) && !archived(s),
  admin_deployment: (s) => maintainerAccess(s) && cicdAvailable(s) && !archived(s),

  // Feature flags (EE): developers and above; off with the repository (`feature_flags_disabled |
  // repository_disabled`; the licence is the route's), read-only on an archived project.
  read_feature_flag: (s) => developerAccess(s) && repositoryAvailable(s),
  create_feature_flag: (s) => developerAccess(s) && repositoryAvailable(s) && !archived(s),
  update_feature_flag: (s) => developerAccess(s) && repositoryAvailable(s) && !archived(s),
  destroy_feature_flag: (s) => developerAccess(s) && repositoryAvailable(s) && !archived(s),
  // Container images: reporter_access or public_access reads, developer_access deletes tags,
  // maintainer_access administers (a repository's removal, bulk tag deletion); all off with the
  // project's registry, writes off on an archived project (READONLY_FEATURES_WHEN_ARCHIVED).
  read_container_image: (s) => (reporterAccess(s) || openToViewer(s)) && registryEnabled(s),
  destroy_container_image: (s) => developerAccess(s) && registryEnabled(s) && !archived(s),
  admin_container_image: (s) => maintainerAccess(s) && registryEnabled(s) && !archived(s),
  // The repository: reporter_access or public_access downloads (reads) code, developer_access
  // pushes; both off with the repository feature, pushes off on an archived project.
  download_code: (s) => (reporterAccess(s) || openToViewer(s)) && repositoryAvailable(s),
  push_code: (s) => developerAccess(s) && repositoryAvailable(s) && !archived(s),
  // Tags (authorize_admin_tag) and their releases: developer_access, as pushing.
  admin_tag: (s) => developerAccess(s) && repositoryAvailable(s) && !archived(s),
  create_release: (s) => developerAccess(s) && repositoryAvailable(s) && !archived(s),
  update_release: (s) => developerAccess(s) && repositoryAvailable(s) && !archived(s),
  // The project's statistics in its entity (`statistics=true`): reporter_access.
  read_statistics: reporterAccess,
  // Merge requests: reporter_access or public_access reads them (a guest of a private project
  // does not); developer_access opens (create_merge_request_from: the source is this project),
  // updates and administers them; the owner and administrators delete them. All off with the
  // merge requests or repository feature, writes off on an archived project. The author and
  // assignees may also update their own (IssuablePolicy), asked of the merge request, not here.
  read_merge_request: (s) => (reporterAccess(s) || openToViewer(s)) && mergeRequestsAvailable(s),
  /** guest_access (public_user_access grants it: any signed-in user who can see the project) opens a merge request into it. */
  create_merge_request_in: (s) => (ownerAccess(s) || guest(s) || publicUserAccess(s)) && mergeRequestsAvailable(s) && !archived(s),
  create_merge_request_from: (s) => developerAccess(s) && mergeRequestsAvailable(s) && !archived(s),
  update_merge_request: (s) => developerAccess(s) && mergeRequestsAvailable(s) && !archived(s),
  admin_merge_request: (s) => developerAccess(s) && mergeRequestsAvailable(s) && !archived(s),
  destroy_merge_request: (s) => ownerAccess(s) && mergeRequestsAvailable(s),
  // Notes (12.10): guest_access (public_user_access grants it) comments and awards emoji;
  // maintainer_access administers anybody's notes (NotePolicy adds the author's own),
  // developer_access resolves discussions (and the merge request's author, asked per merge
  // request); owners and administrators set a note's created_at. Notes are read-only on an
  // archived project (READONLY_FEATURES_WHEN_ARCHIVED), award emoji are not.
  create_note: (s) => (ownerAccess(s) || guest(s) || publicUserAccess(s)) && !archived(s),
  award_emoji: (s) => ownerAccess(s) || guest(s) || publicUserAccess(s),
  admin_note: (s) => maintainerAccess(s) && !archived(s),
  resolve_note: developerAccess,
  set_note_created_at: ownerAccess,
  // Issues (12.10): guest_access or public_access reads them (IssuePolicy narrows a confidential
  // one, src/http/routes/issues/find.ts), guest_access (public_user_access grants it) opens them,
  // reporter_access updates, administers and reads confidential ones, the owner and
  // administrators delete them and set created_at / updated_at. All off with the issues
  // feature, writes off on an archived project. The author and assignees may also update their own.
  read_issue: (s) => (ownerAccess(s) || guest(s) || openToViewer(s)) && featureAvailable(s, 'issues'),
  create_issue: (s) => (ownerAccess(s) || guest(s) || publicUserAccess(s)) && featureAvailable(s, 'issues') && !archived(s),
  update_issue: (s) => reporterAccess(s) && featureAvailable(s, 'issues') && !archived(s),
  admin_issue: (s) => reporterAccess(s) && featureAvailable(s, 'issues') && !archived(s),
  read_confidential_issues: (s) => reporterAccess(s) && featureAvailable(s, 'issues'),
  destroy_issue: (s) => ownerAccess(s) && featureAvailable(s, 'issues') && !archived(s),
  set_issue_iid: ownerAccess,
  set_issue_created_at: ownerAccess,
  set_issue_updated_at: ownerAccess,
  // Issue boards (12.10): guest_access or public_access reads boards and their lists,
  // reporter_access administers both; all off with the issues feature. Lists are read-only on
  // an archived project (READONLY_FEATURES_WHEN_ARCHIVED), and boards too under EE's list —
  // only EE's routes write boards.
  read_board: (s) => (ownerAccess(s) || guest(s) || openToViewer(s)) && featureAvailable(s, 'issues'),
  admin_board: (s) => reporterAccess(s) && featureAvailable(s, 'issues') && !archived(s),
  // EE: reporter_access links issues (related_issues; the licence is the route's).
  admin_issue_link: (s) => reporterAccess(s) && featureAvailable(s, 'issues') && !archived(s),
  // EE: `rule { can?(:reporter_access) }.enable :admin_epic_issue` (no feature or archive condition).
  admin_epic_issue: reporterAccess,
  admin_list: (s) => reporterAccess(s) && featureAvailable(s, 'issues') && !archived(s),
  // Project snippets (12.10's names): reporter_access creates them, maintainer_access updates and
  // administers anybody's (ProjectSnippetPolicy, src/domain/policy/snippet.ts, narrows both per
  // snippet and adds the author); off with the snippets feature, writes off on an archived project.
  create_snippet: (s) => reporterAccess(s) && featureAvailable(s, 'snippets') && !archived(s),
  update_snippet: (s) => maintainerAccess(s) && featureAvailable(s, 'snippets') && !archived(s),
  admin_snippet: (s) => maintainerAccess(s) && featureAvailable(s, 'snippets') && !archived(s),
} as const satisfies Record<string, Rule>;

export type ProjectAbility = keyof typeof PROJECT_POLICY;
