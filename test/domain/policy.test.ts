import { describe, expect, it } from 'vitest';
import { ACCESS, type Viewer, type Visibility } from '../../src/domain/access.js';
import { can } from '../../src/domain/policy/can.js';
import { GROUP_POLICY, type GroupAbility, type GroupSubject, type PolicyGroup } from '../../src/domain/policy/group.js';
import { featureAvailable, PROJECT_POLICY, type PolicyProject, type ProjectAbility, type ProjectFeature, type ProjectSubject } from '../../src/domain/policy/project.js';

/**
 * The policy table against GitLab 12.10's ProjectPolicy, GroupPolicy, NamespacePolicy and the
 * member policies: every ability, for every kind of viewer, on every visibility.
 */

const TODAY = '2030-01-01';
const user = (id: number, extra: Partial<Viewer> = {}): Viewer => ({ id, isAdmin: false, external: false, today: TODAY, ...extra });
const VISIBILITIES: readonly Visibility[] = ['private', 'internal', 'public'];

// ───────────────────────────── Projects ─────────────────────────────

/** The viewers of a project in a group, and a personal project's owner (a maintainer by project_authorizations). */
const PROJECT_ACTORS = {
  anonymous: { viewer: null, role: null },
  outsider: { viewer: user(2), role: null },
  external: { viewer: user(3, { external: true }), role: null },
  guest: { viewer: user(4), role: ACCESS.GUEST },
  reporter: { viewer: user(5), role: ACCESS.REPORTER },
  developer: { viewer: user(6), role: ACCESS.DEVELOPER },
  maintainer: { viewer: user(7), role: ACCESS.MAINTAINER },
  groupOwner: { viewer: user(8), role: ACCESS.OWNER },
  personalOwner: { viewer: user(9), role: ACCESS.MAINTAINER },
  admin: { viewer: user(1, { isAdmin: true }), role: null },
} as const;
type ProjectActor = keyof typeof PROJECT_ACTORS;
const PROJECT_ACTOR_NAMES = Object.keys(PROJECT_ACTORS) as ProjectActor[];

/** Every feature enabled, but those `levels` names. */
const features = (levels: Partial<PolicyProject['settings']> = {}): PolicyProject['settings'] => ({
  issues_access_level: 'enabled',
  merge_requests_access_level: 'enabled',
  wiki_access_level: 'enabled',
  snippets_access_level: 'enabled',
  builds_access_level: 'enabled',
  repository_access_level: 'enabled',
  ...levels,
});

const openProject = (visibility: Visibility, extra: Partial<PolicyProject> = {}): PolicyProject => ({
  visibility,
  archived: false,
  request_access_enabled: true,
  container_registry_enabled: true,
  settings: features(),
  ...extra,
});

function projectSubject(actor: ProjectActor, project: PolicyProject): ProjectSubject {
  const { viewer, role } = PROJECT_ACTORS[actor];
  return { kind: 'project', viewer, role, project, personalOwnerId: actor === 'personalOwner' ? 9 : null };
}

const members: ProjectActor[] = ['guest', 'reporter', 'developer', 'maintainer', 'groupOwner', 'personalOwner', 'admin'];
const reporters: ProjectActor[] = ['reporter', 'developer', 'maintainer', 'groupOwner', 'personalOwner', 'admin'];
const developers: ProjectActor[] = ['developer', 'maintainer', 'groupOwner', 'personalOwner', 'admin'];
const maintainers: ProjectActor[] = ['maintainer', 'groupOwner', 'personalOwner', 'admin'];
const owners: ProjectActor[] = ['groupOwner', 'personalOwner', 'admin'];

/** Who may, on a private, an internal and a public project. */
const PROJECT_TABLE: Record<ProjectAbility, Record<Visibility, readonly ProjectActor[]>> = {
  read_project: { private: members, internal: [...members, 'outsider'], public: [...members, 'outsider', 'external', 'anonymous'] },
  read_project_member: { private: members, internal: [...members, 'outsider'], public: [...members, 'outsider', 'external', 'anonymous'] },
  admin_project: { private: maintainers, internal: maintainers, public: maintainers },
  admin_project_member: { private: maintainers, internal: maintainers, public: maintainers },
  change_namespace: { private: owners, internal: owners, public: owners },
  change_visibility_level: { private: owners, internal: owners, public: owners },
  rename_project: { private: owners, internal: owners, public: owners },
  archive_project: { private: owners, internal: owners, public: owners },
  remove_project: { private: owners, internal: owners, public: owners },
  remove_fork_project: { private: owners, internal: owners, public: owners },
  // GitLab 12: reporter_access or public_user_access (signed in) forks.
  fork_project: { private: reporters, internal: [...reporters, 'guest', 'outsider'], public: [...reporters, 'guest', 'outsider', 'external'] },
  request_access: { private: [], internal: ['outsider'], public: ['outsider', 'external'] },
  // GitLab 12: guest_access | public_access reads milestones and labels; developer_access administers milestones, reporter_access labels.
  read_milestone: { private: members, internal: [...members, 'outsider'], public: [...members, 'outsider', 'external', 'anonymous'] },
  admin_milestone: { private: developers, internal: developers, public: developers },
  read_label: { private: members, internal: [...members, 'outsider'], public: [...members, 'outsider', 'external', 'anonymous'] },
  admin_label: { private: reporters, internal: reporters, public: reporters },
  // GitLab 12: no public_access to environments and deployments; reporters and above.
  read_environment: { private: reporters, internal: reporters, public: reporters },
  create_environment: { private: developers, internal: developers, public: developers },
  update_environment: { private: developers, internal: developers, public: developers },
  destroy_environment: { private: developers, internal: developers, public: developers },
  stop_environment: { private: developers, internal: developers, public: developers },
  admin_environment: { private: maintainers, internal: maintainers, public: maintainers },
  read_deployment: { private: reporters, internal: reporters, public: reporters },
  create_deployment: { private: developers, internal: developers, public: developers },
  update_deployment: { private: developers, internal: developers, public: developers },
  admin_deployment: { private: maintainers, internal: maintainers, public: maintainers },
  // EE: feature flags for developers and above, whatever the visibility.
  read_feature_flag: { private: developers, internal: developers, public: developers },
  create_feature_flag: { private: developers, internal: developers, public: developers },
  update_feature_flag: { private: developers, internal: developers, public: developers },
  destroy_feature_flag: { private: developers, internal: developers, public: developers },
  // GitLab 12: public_access reads container images (anonymous too on a public project); developers delete tags.
  read_container_image: { private: reporters, internal: [...reporters, 'guest', 'outsider'], public: [...reporters, 'guest', 'outsider', 'external', 'anonymous'] },
  destroy_container_image: { private: developers, internal: developers, public: developers },
  admin_container_image: { private: maintainers, internal: maintainers, public: maintainers },
  // GitLab 12: reporter_access or public_access downloads code; developers push.
  download_code: { private: reporters, internal: [...reporters, 'guest', 'outsider'], public: [...reporters, 'guest', 'outsider', 'external', 'anonymous'] },
  push_code: { private: developers, internal: developers, public: developers },
  // GitLab 12: developer_access administers tags (authorize_admin_tag) and creates and updates releases.
  admin_tag: { private: developers, internal: developers, public: developers },
  create_release: { private: developers, internal: developers, public: developers },
  update_release: { private: developers, internal: developers, public: developers },
  // GitLab 12: reporter_access reads a project's statistics.
  read_statistics: { private: reporters, internal: reporters, public: reporters },
  // GitLab 12: reporter_access or public_access reads merge requests; developers open, update and
  // administer them; owners and administrators delete them.
  read_merge_request: { private: reporters, internal: [...reporters, 'guest', 'outsider'], public: [...reporters, 'guest', 'outsider', 'external', 'anonymous'] },
  create_merge_request_from: { private: developers, internal: developers, public: developers },
  update_merge_request: { private: developers, internal: developers, public: developers },
  admin_merge_request: { private: developers, internal: developers, public: developers },
  destroy_merge_request: { private: owners, internal: owners, public: owners },
  // GitLab 12.10: guest_access (public_user_access too) comments and awards; maintainers administer notes, developers resolve.
  create_note: { private: members, internal: [...members, 'outsider'], public: [...members, 'outsider', 'external'] },
  award_emoji: { private: members, internal: [...members, 'outsider'], public: [...members, 'outsider', 'external'] },
  admin_note: { private: maintainers, internal: maintainers, public: maintainers },
  resolve_note: { private: developers, internal: developers, public: developers },
  set_note_created_at: { private: owners, internal: owners, public: owners },
  // GitLab 12: guest_access — members, and signed-in users who can see the project (public_user_access).
  create_merge_request_in: { private: members, internal: [...members, 'outsider'], public: [...members, 'outsider', 'external'] },
  // GitLab 12.10: reporter_access creates project snippets; maintainer_access updates and administers them.
  create_snippet: { private: reporters, internal: reporters, public: reporters },
  update_snippet: { private: maintainers, internal: maintainers, public: maintainers },
  admin_snippet: { private: maintainers, internal: maintainers, public: maintainers },
  // GitLab 12.10: guest_access or public_access reads issues; guest_access (public_user_access too) opens them;
  // reporters update, administer and read confidential ones; owners and administrators delete them and set their dates.
  read_issue: { private: members, internal: [...members, 'outsider'], public: [...members, 'outsider', 'external', 'anonymous'] },
  create_issue: { private: members, internal: [...members, 'outsider'], public: [...members, 'outsider', 'external'] },
  update_issue: { private: reporters, internal: reporters, public: reporters },
  admin_issue: { private: reporters, internal: reporters, public: reporters },
  read_confidential_issues: { private: reporters, internal: reporters, public: reporters },
  destroy_issue: { private: owners, internal: owners, public: owners },
  set_issue_created_at: { private: owners, internal: owners, public: owners },
  set_issue_updated_at: { private: owners, internal: owners, public: owners },
  set_issue_iid: { private: owners, internal: owners, public: owners },
  // Issue boards (12.10): read as issues are; reporters administer boards and lists.
  read_board: { private: members, internal: [...members, 'outsider'], public: [...members, 'outsider', 'external', 'anonymous'] },
  admin_board: { private: reporters, internal: reporters, public: reporters },
  admin_issue_link: { private: reporters, internal: reporters, public: reporters },
  // EE: reporter_access puts the project's issues in epics (and takes them out).
  admin_epic_issue: { private: reporters, internal: reporters, public: reporters },
  admin_list: { private: reporters, internal: reporters, public: reporters },
};

const ENVIRONMENT_WRITES: readonly ProjectAbility[] = [
  'create_environment', 'update_environment', 'destroy_environment', 'stop_environment', 'admin_environment',
  'create_deployment', 'update_deployment', 'admin_deployment',
];

/** Who may `ability` on `project`, in actor order. */
const whoMayProject = (ability: ProjectAbility, project: PolicyProject) =>
  PROJECT_ACTOR_NAMES.filter((actor) => can(projectSubject(actor, project), ability));
const sorted = (actors: readonly string[]) => [...actors].sort();

describe('ProjectPolicy', () => {
  it('has a row of the table for every ability', () => {
    expect(Object.keys(PROJECT_TABLE).sort()).toEqual(Object.keys(PROJECT_POLICY).sort());
  });

  for (const ability of Object.keys(PROJECT_TABLE) as ProjectAbility[]) {
    it.each(VISIBILITIES)(`${ability} on a %s project`, (visibility) => {
      expect(sorted(whoMayProject(ability, openProject(visibility)))).toEqual(sorted(PROJECT_TABLE[ability][visibility]));
    });
  }

  it('makes an archived project read-only: no environment or deployment writes, no access requests', () => {
    const archived = openProject('public', { archived: true });
    for (const ability of [...ENVIRONMENT_WRITES, 'request_access'] as const) expect(whoMayProject(ability, archived)).toEqual([]);
    expect(sorted(whoMayProject('read_environment', archived))).toEqual(sorted(reporters));
    expect(sorted(whoMayProject('admin_project', archived))).toEqual(sorted(maintainers));
    expect(sorted(whoMayProject('remove_project', archived))).toEqual(sorted(owners));
  });

  it('makes milestones and labels read-only on an archived project', () => {
    const archived = openProject('public', { archived: true });
    expect(whoMayProject('admin_milestone', archived)).toEqual([]);
    expect(whoMayProject('admin_label', archived)).toEqual([]);
    expect(sorted(whoMayProject('read_milestone', archived))).toEqual(sorted([...members, 'outsider', 'external', 'anonymous']));
    expect(sorted(whoMayProject('read_label', archived))).toEqual(sorted([...members, 'outsider', 'external', 'anonymous']));
  });

  it('turns environments and deployments off with builds or the repository, for administrators too', () => {
    for (const off of [{ builds_access_level: 'disabled' }, { repository_access_level: 'disabled' }] as const) {
      const project = openProject('public', { settings: features({ builds_access_level: 'enabled', repository_access_level: 'enabled', merge_requests_access_level: 'enabled', ...off }) });
      for (const ability of [...ENVIRONMENT_WRITES, 'read_environment', 'read_deployment'] as const) expect(whoMayProject(ability, project)).toEqual([]);
      expect(sorted(whoMayProject('admin_project', project))).toEqual(sorted(maintainers));
    }
  });

  it('keeps private builds to members (and administrators)', () => {
    const project = openProject('public', { settings: features({ builds_access_level: 'private', repository_access_level: 'private', merge_requests_access_level: 'enabled' }) });
    expect(sorted(whoMayProject('read_environment', project))).toEqual(sorted(reporters));
    expect(sorted(whoMayProject('create_deployment', project))).toEqual(sorted(developers));
  });

  it('turns feature flags off with the repository, and makes them read-only on an archived project', () => {
    const noRepository = openProject('public', { settings: features({ builds_access_level: 'enabled', repository_access_level: 'disabled', merge_requests_access_level: 'enabled' }) });
    const archived = openProject('public', { archived: true });
    const noBuilds = openProject('public', { settings: features({ builds_access_level: 'disabled', repository_access_level: 'enabled', merge_requests_access_level: 'enabled' }) });
    for (const ability of ['read_feature_flag', 'create_feature_flag', 'update_feature_flag', 'destroy_feature_flag'] as const) {
      expect(whoMayProject(ability, noRepository)).toEqual([]);
      expect(sorted(whoMayProject(ability, noBuilds))).toEqual(sorted(developers));
      expect(sorted(whoMayProject(ability, archived))).toEqual(ability === 'read_feature_flag' ? sorted(developers) : []);
    }
  });

  it('turns the repository off with its feature, and its pushes on an archived project', () => {
    const noRepository = openProject('public', { settings: features({ builds_access_level: 'enabled', repository_access_level: 'disabled', merge_requests_access_level: 'enabled' }) });
    expect(whoMayProject('download_code', noRepository)).toEqual([]);
    expect(whoMayProject('push_code', noRepository)).toEqual([]);
    const archived = openProject('private', { archived: true });
    expect(sorted(whoMayProject('download_code', archived))).toEqual(sorted(reporters));
    expect(whoMayProject('push_code', archived)).toEqual([]);
    for (const ability of ['admin_tag', 'create_release', 'update_release'] as const) {
      expect(whoMayProject(ability, noRepository)).toEqual([]);
      expect(whoMayProject(ability, archived)).toEqual([]);
    }
  });

  it('turns merge requests off with their feature or the repository, a private feature for members only, writes on an archived project', () => {
    const abilities = ['read_merge_request', 'create_merge_request_from', 'update_merge_request', 'admin_merge_request'] as const;
    for (const off of [{ merge_requests_access_level: 'disabled' }, { repository_access_level: 'disabled' }] as const) {
      const project = openProject('public', { settings: features({ builds_access_level: 'enabled', repository_access_level: 'enabled', merge_requests_access_level: 'enabled', ...off }) });
      for (const ability of [...abilities, 'destroy_merge_request'] as const) expect(whoMayProject(ability, project)).toEqual([]);
    }
    const privateFeature = openProject('public', { settings: features({ builds_access_level: 'enabled', repository_access_level: 'enabled', merge_requests_access_level: 'private' }) });
    expect(sorted(whoMayProject('read_merge_request', privateFeature))).toEqual(sorted(reporters));
    // A private merge requests feature needs a reporter to open one into the project too.
    expect(sorted(whoMayProject('create_merge_request_in', privateFeature))).toEqual(sorted(reporters));
    for (const off of [{ merge_requests_access_level: 'disabled' }, { repository_access_level: 'disabled' }] as const) {
      expect(whoMayProject('create_merge_request_in', openProject('public', { settings: features(off) }))).toEqual([]);
    }
    expect(whoMayProject('create_merge_request_in', openProject('public', { archived: true }))).toEqual([]);
    const archived = openProject('private', { archived: true });
    expect(sorted(whoMayProject('read_merge_request', archived))).toEqual(sorted(reporters));
    for (const ability of abilities.slice(1)) expect(whoMayProject(ability, archived)).toEqual([]);
  });

  it('makes a private feature available to members at its minimum level (reporter for merge requests, guest for the rest) and administrators', () => {
    const byFeature = (feature: ProjectFeature, level: 'enabled' | 'private' | 'disabled') =>
      PROJECT_ACTOR_NAMES.filter((actor) => featureAvailable(projectSubject(actor, openProject('public', { settings: features({ [`${feature}_access_level`]: level }) })), feature));
    for (const feature of ['issues', 'merge_requests', 'wiki', 'snippets', 'builds', 'repository'] as const) {
      expect(sorted(byFeature(feature, 'enabled')), feature).toEqual(sorted(PROJECT_ACTOR_NAMES));
      expect(byFeature(feature, 'disabled'), feature).toEqual([]);
      expect(sorted(byFeature(feature, 'private')), feature).toEqual(sorted(feature === 'merge_requests' ? reporters : members));
    }
  });

  it("turns container images off with the project's registry, and their writes on an archived project", () => {
    const abilities = ['read_container_image', 'destroy_container_image', 'admin_container_image'] as const;
    for (const ability of abilities) expect(whoMayProject(ability, openProject('public', { container_registry_enabled: false }))).toEqual([]);
    const archived = openProject('private', { archived: true });
    expect(sorted(whoMayProject('read_container_image', archived))).toEqual(sorted(reporters));
    expect(whoMayProject('destroy_container_image', archived)).toEqual([]);
    expect(whoMayProject('admin_container_image', archived)).toEqual([]);
  });

  it('refuses access requests where request_access_enabled is off', () => {
    expect(whoMayProject('request_access', openProject('public', { request_access_enabled: false }))).toEqual([]);
  });

  it('lets managers remove any member and a member remove themselves (destroy_project_member)', () => {
    const project = openProject('private');
    const destroy = (actor: ProjectActor, userId: number) => can({ kind: 'project_member', project: projectSubject(actor, project), userId }, 'destroy_project_member');
    expect(destroy('maintainer', 42)).toBe(true);
    expect(destroy('admin', 42)).toBe(true);
    expect(destroy('developer', 42)).toBe(false);
    expect(destroy('developer', PROJECT_ACTORS.developer.viewer.id)).toBe(true);
    expect(destroy('outsider', PROJECT_ACTORS.outsider.viewer.id)).toBe(true);
    expect(destroy('anonymous', 42)).toBe(false);
  });
});

// ───────────────────────────── Groups ─────────────────────────────

const GROUP_ACTORS = {
  anonymous: { viewer: null, role: null },
  outsider: { viewer: user(2), role: null },
  external: { viewer: user(3, { external: true }), role: null },
  guest: { viewer: user(4), role: ACCESS.GUEST },
  reporter: { viewer: user(5), role: ACCESS.REPORTER },
  developer: { viewer: user(6), role: ACCESS.DEVELOPER },
  maintainer: { viewer: user(7), role: ACCESS.MAINTAINER },
  owner: { viewer: user(8), role: ACCESS.OWNER },
  admin: { viewer: user(1, { isAdmin: true }), role: null },
} as const;
type GroupActor = keyof typeof GROUP_ACTORS;
const GROUP_ACTOR_NAMES = Object.keys(GROUP_ACTORS) as GroupActor[];

const openGroup = (visibility: Visibility, extra: Partial<PolicyGroup> = {}): PolicyGroup => ({
  visibility,
  request_access_enabled: true,
  project_creation_level: 'maintainer',
  subgroup_creation_level: 'owner',
  ...extra,
});
const groupSubject = (actor: GroupActor, group: PolicyGroup, hasProjects?: boolean): GroupSubject => ({
  kind: 'group',
  ...GROUP_ACTORS[actor],
  group,
  ...(hasProjects === undefined ? {} : { hasProjects }),
});
const whoMayGroup = (ability: GroupAbility, group: PolicyGroup) => GROUP_ACTOR_NAMES.filter((actor) => can(groupSubject(actor, group), ability));

const groupMembers: GroupActor[] = ['guest', 'reporter', 'developer', 'maintainer', 'owner', 'admin'];
const groupOwners: GroupActor[] = ['owner', 'admin'];
const groupReporters: GroupActor[] = ['reporter', 'developer', 'maintainer', ...groupOwners];

/** Who may, on a private, an internal and a public group (project_creation_level maintainer, subgroup_creation_level owner). */
const GROUP_TABLE: Record<GroupAbility, Record<Visibility, readonly GroupActor[]>> = {
  read_group: { private: groupMembers, internal: [...groupMembers, 'outsider'], public: [...groupMembers, 'outsider', 'external', 'anonymous'] },
  read_group_member: { private: groupMembers, internal: [...groupMembers, 'outsider'], public: [...groupMembers, 'outsider', 'external', 'anonymous'] },
  admin_group: { private: groupOwners, internal: groupOwners, public: groupOwners },
  admin_group_member: { private: groupOwners, internal: groupOwners, public: groupOwners },
  change_visibility_level: { private: groupOwners, internal: groupOwners, public: groupOwners },
  admin_group_saml: { private: groupOwners, internal: groupOwners, public: groupOwners },
  create_projects: { private: ['maintainer', ...groupOwners], internal: ['maintainer', ...groupOwners], public: ['maintainer', ...groupOwners] },
  create_subgroup: { private: groupOwners, internal: groupOwners, public: groupOwners },
  request_access: { private: [], internal: ['outsider'], public: ['outsider', 'external'] },
  read_epic: { private: groupMembers, internal: [...groupMembers, 'outsider'], public: [...groupMembers, 'outsider', 'external', 'anonymous'] },
  create_epic: { private: groupReporters, internal: groupReporters, public: groupReporters },
  admin_epic: { private: groupReporters, internal: groupReporters, public: groupReporters },
  update_epic: { private: groupReporters, internal: groupReporters, public: groupReporters },
  destroy_epic: { private: groupOwners, internal: groupOwners, public: groupOwners },
  read_container_image: { private: groupReporters, internal: groupReporters, public: groupReporters },
};

describe('GroupPolicy', () => {
  it('has a row of the table for every ability', () => {
    expect(Object.keys(GROUP_TABLE).sort()).toEqual(Object.keys(GROUP_POLICY).sort());
  });

  for (const ability of Object.keys(GROUP_TABLE) as GroupAbility[]) {
    it.each(VISIBILITIES)(`${ability} on a %s group`, (visibility) => {
      expect(sorted(whoMayGroup(ability, openGroup(visibility)))).toEqual(sorted(GROUP_TABLE[ability][visibility]));
    });
  }

  it('lets a viewer read a private group through a project they may read in it (has_projects)', () => {
    expect(can(groupSubject('outsider', openGroup('private'), true), 'read_group')).toBe(true);
    expect(can(groupSubject('outsider', openGroup('private'), false), 'read_group')).toBe(false);
    expect(can(groupSubject('outsider', openGroup('private'), true), 'admin_group')).toBe(false);
  });

  it('follows project_creation_level; noone refuses administrators too', () => {
    expect(sorted(whoMayGroup('create_projects', openGroup('private', { project_creation_level: 'developer' })))).toEqual(sorted(['developer', 'maintainer', ...groupOwners]));
    expect(whoMayGroup('create_projects', openGroup('private', { project_creation_level: 'noone' }))).toEqual([]);
  });

  it('follows subgroup_creation_level', () => {
    expect(sorted(whoMayGroup('create_subgroup', openGroup('private', { subgroup_creation_level: 'maintainer' })))).toEqual(sorted(['maintainer', ...groupOwners]));
  });

  it('refuses access requests where request_access_enabled is off', () => {
    expect(whoMayGroup('request_access', openGroup('public', { request_access_enabled: false }))).toEqual([]);
  });

  it('lets owners remove any member and a member remove themselves (destroy_group_member)', () => {
    const group = openGroup('private');
    const destroy = (actor: GroupActor, userId: number) => can({ kind: 'group_member', group: groupSubject(actor, group), userId }, 'destroy_group_member');
    expect(destroy('owner', 42)).toBe(true);
    expect(destroy('admin', 42)).toBe(true);
    expect(destroy('maintainer', 42)).toBe(false);
    expect(destroy('maintainer', GROUP_ACTORS.maintainer.viewer.id)).toBe(true);
    expect(destroy('outsider', GROUP_ACTORS.outsider.viewer.id)).toBe(true);
    expect(destroy('anonymous', 42)).toBe(false);
  });
});

// ───────────────────────────── Personal namespaces ─────────────────────────────

describe('NamespacePolicy', () => {
  const createIn = (viewer: Viewer | null, canCreatePersonalProject = true) =>
    can({ kind: 'namespace', viewer, ownerId: 9, canCreatePersonalProject }, 'create_projects');

  it("lets the namespace's owner and administrators create projects, within the creator's project limit", () => {
    expect(createIn(user(9))).toBe(true);
    expect(createIn(user(1, { isAdmin: true }))).toBe(true);
    expect(createIn(user(2))).toBe(false);
    expect(createIn(null)).toBe(false);
    expect(createIn(user(9), false)).toBe(false);
    expect(createIn(user(1, { isAdmin: true }), false)).toBe(false);
  });
});
