import type { Config } from '../../config.js';
import type { Db } from '../../database/database.js';
import type { Viewer } from '../../domain/access.js';
import { can } from '../../domain/policy/can.js';
import { featureAvailable, type ProjectSubject } from '../../domain/policy/project.js';
import { licensed } from '../../domain/policy/licensed.js';
import { avatarUrlOf } from '../../domain/uploads.js';
import type { FeatureAccessLevel } from '../../domain/projects/settings.js';
import type { NamespaceRow } from '../../projections/groups/tables.js';
import { type SharedGroupRow, projectPresentationData } from '../../projections/projects/presentation.js';
import { projectListQuery } from '../../projections/projects/queries.js';
import type { ProjectRow } from '../../projections/projects/tables.js';
import type { UserRow } from '../../projections/users.js';
import { groupWebUrl } from './groups.js';
import { avatarUrl } from '../../projections/users/avatar.js';
import { iso, toUserBasic, userWebUrl } from './users.js';

/** What one project's record depends on besides its row. */
export interface ProjectEntityContext {
  readonly config: Config;
  readonly viewer: Viewer | null;
  /** The viewer's effective access level in the project (null: none). */
  readonly role: number | null;
  /** The project's namespace row (group or personal namespace). */
  readonly namespace: NamespaceRow | undefined;
  /** The owner of a personal namespace. */
  readonly owner?: UserRow | undefined;
  readonly sharedWithGroups?: readonly SharedGroupRow[];
  /** GitLab's user_can_admin_project option: runners_token, import_error, build_git_strategy. */
  readonly canAdmin?: boolean;
  readonly runnersToken?: string | undefined;
  /** Present for Entities::ProjectWithAccess. */
  readonly permissions?: { readonly projectAccess: number | null; readonly groupAccess: number | null };
  /** Present only for an administrator's with_custom_attributes. */
  readonly customAttributes?: readonly { key: string; value: string }[] | undefined;
  /** statistics=true (shown to reporters and above). */
  readonly statistics?: boolean;
  /** license=true (GET /projects/:id): no repository holds a license here, so both are null. */
  readonly license?: boolean;
  /** The project it is a fork of, as BasicProjectDetails, when the viewer may read it. */
  readonly forkedFrom?: Fields | undefined;
}

/** What Entities::BasicProjectDetails needs of a personal namespace's owner: its avatar. */
type OwnerAvatar = Pick<UserRow, 'avatar_url' | 'email'>;
type SimpleProjectContext = Omit<ProjectEntityContext, 'owner'> & { readonly owner?: OwnerAvatar | undefined };

// ───────────────────────────── The policy's subject ─────────────────────────────

const settingsOf = (row: ProjectRow) => row.settings as unknown as Record<string, unknown>;
const level = (row: ProjectRow, feature: string): FeatureAccessLevel => (settingsOf(row)[`${feature}_access_level`] as FeatureAccessLevel | undefined) ?? 'enabled';

/** The project as the policy asks of it, for the viewer of this entity. */
function policySubject(row: ProjectRow, ctx: Pick<ProjectEntityContext, 'viewer' | 'role' | 'namespace'>): ProjectSubject {
  const personalOwnerId = ctx.namespace?.kind === 'user' ? ctx.namespace.owner_id : null;
  return { kind: 'project', viewer: ctx.viewer, role: ctx.role, project: row, personalOwnerId };
}

// ───────────────────────────── Entities ─────────────────────────────

export const projectWebUrl = (config: Config, pathWithNamespace: string) => `${config.externalUrl}/${pathWithNamespace}`;

/** GitLab's ssh_url_to_repo: `git@<host>:<path>.git` (gitlab_shell ssh_path_prefix). */
export function sshUrlToRepo(config: Config, pathWithNamespace: string): string {
  const host = new URL(config.externalUrl).hostname;
  return `git@${host}:${pathWithNamespace}.git`;
}

/** Entities::NamespaceBasic. */
export function toNamespaceBasic(config: Config, namespace: NamespaceRow | undefined, owner: OwnerAvatar | undefined, row: ProjectRow) {
  if (!namespace) {
    // The namespace row is gone (being removed): what the project row still knows.
    const fullPath = row.path_with_namespace.slice(0, -(row.path.length + 1));
    return { id: row.namespace_id, name: fullPath, path: fullPath.split('/').at(-1) ?? '', kind: 'group', full_path: fullPath, parent_id: null, avatar_url: null, web_url: groupWebUrl(config, fullPath) };
  }
  const personal = namespace.kind === 'user';
  return {
    id: namespace.id,
    name: namespace.name,
    path: namespace.path,
    kind: namespace.kind,
    full_path: namespace.full_path,
    parent_id: namespace.parent_id,
    // GitLab: a personal namespace shows its owner's avatar.
    avatar_url: personal ? (owner ? avatarUrl(owner, config.externalUrl) : null) : avatarUrlOf(config.externalUrl, namespace.avatar_url),
    web_url: personal ? userWebUrl(config, namespace.path) : groupWebUrl(config, namespace.full_path),
  };
}

// Fast path (not a pattern to copy; an entity is a literal in GitLab's field order): each
// view writes its fields into one object, in GitLab's order. A literal of ~70 fields
// with conditional spreads drops V8 into dictionary mode: ~300 µs per project, most of a
// page of 20.
type Fields = Record<string, unknown>;

/**
 * Entities::BasicProjectDetails — `simple=true`, anonymous GET /projects, and the embedded
 * project records that need no more.
 */
export function toSimpleProject(row: ProjectRow, ctx: SimpleProjectContext): Fields {
  const { config } = ctx;
  const readme = Boolean(settingsOf(row).readme) && row.default_branch !== null;
  const webUrl = projectWebUrl(config, row.path_with_namespace);
  const out: Fields = {};
  out.id = row.id;
  out.description = row.description;
  out.name = row.name;
  out.name_with_namespace = row.name_with_namespace;
  out.path = row.path;
  out.path_with_namespace = row.path_with_namespace;
  out.created_at = iso(row.created_at);
  if (can(policySubject(row, ctx), 'download_code')) out.default_branch = row.default_branch;
  out.tag_list = [...row.tag_list].sort();
  out.ssh_url_to_repo = sshUrlToRepo(config, row.path_with_namespace);
  out.http_url_to_repo = `${webUrl}.git`;
  out.web_url = webUrl;
  out.readme_url = readme ? `${webUrl}/blob/${row.default_branch}/README.md` : null;
  if (ctx.license) {
    out.license_url = null;
    out.license = null;
  }
  out.avatar_url = avatarUrlOf(config.externalUrl, row.avatar_url);
  out.star_count = row.star_count;
  out.forks_count = row.forks_count;
  out.last_activity_at = iso(row.last_activity_at);
  out.namespace = toNamespaceBasic(config, ctx.namespace, ctx.owner, row);
  if (ctx.customAttributes) out.custom_attributes = ctx.customAttributes.map(({ key, value }) => ({ key, value }));
  return out;
}

const memberAccess = (accessLevel: number | null) => (accessLevel === null ? null : { access_level: accessLevel, notification_level: 3 });

/**
 * Entities::Project (GitLab 12.10) — and Entities::ProjectWithAccess when `ctx.permissions`
 * is given. EE's fields follow, on the tiers that license them.
 */
export function toProject(row: ProjectRow, ctx: ProjectEntityContext): Fields {
  const { config } = ctx;
  const s = settingsOf(row);
  const api = `${config.externalUrl}/api/v4/projects/${row.id}`;
  const subject = policySubject(row, ctx);
  const issues = featureAvailable(subject, 'issues');
  const mergeRequests = featureAvailable(subject, 'merge_requests');
  const personal = ctx.namespace?.kind === 'user';
  const canAdmin = ctx.canAdmin ?? false;
  const out = toSimpleProject(row, ctx);
  const links: Fields = { self: api };
  if (issues) links.issues = `${api}/issues`;
  if (mergeRequests) links.merge_requests = `${api}/merge_requests`;
  links.repo_branches = `${api}/repository/branches`;
  links.labels = `${api}/labels`;
  links.events = `${api}/events`;
  links.members = `${api}/members`;
  out._links = links;
  out.empty_repo = row.default_branch === null;
  out.archived = row.archived;
  out.visibility = row.visibility;
  if (personal && ctx.owner) out.owner = toUserBasic(ctx.owner, config);
  out.resolve_outdated_diff_discussions = s.resolve_outdated_diff_discussions ?? false;
  out.container_registry_enabled = row.container_registry_enabled;
  out.issues_enabled = issues;
  out.merge_requests_enabled = mergeRequests;
  out.wiki_enabled = featureAvailable(subject, 'wiki');
  out.jobs_enabled = featureAvailable(subject, 'builds');
  out.snippets_enabled = featureAvailable(subject, 'snippets');
  out.can_create_merge_request_in = can(subject, 'create_merge_request_in');
  out.issues_access_level = level(row, 'issues');
  out.repository_access_level = level(row, 'repository');
  out.merge_requests_access_level = level(row, 'merge_requests');
  out.wiki_access_level = level(row, 'wiki');
  out.builds_access_level = level(row, 'builds');
  out.snippets_access_level = level(row, 'snippets');
  out.pages_access_level = level(row, 'pages');
  out.emails_disabled = s.emails_disabled ?? null;
  out.shared_runners_enabled = row.shared_runners_enabled;
  out.lfs_enabled = row.lfs_enabled;
  out.creator_id = row.creator_id;
  if (ctx.forkedFrom) out.forked_from_project = ctx.forkedFrom;
  out.import_status = 'none';
  if (canAdmin) out.import_error = null;
  if (issues) out.open_issues_count = row.open_issues_count;
  if (canAdmin && ctx.runnersToken !== undefined) out.runners_token = ctx.runnersToken;
  out.ci_default_git_depth = s.ci_default_git_depth ?? 50;
  out.public_jobs = row.public_jobs;
  if (canAdmin) out.build_git_strategy = s.build_git_strategy ?? 'fetch';
  out.build_timeout = s.build_timeout ?? 3600;
  out.auto_cancel_pending_pipelines = s.auto_cancel_pending_pipelines ?? 'enabled';
  out.build_coverage_regex = s.build_coverage_regex ?? null;
  if (can(subject, 'download_code')) out.ci_config_path = s.ci_config_path ?? null;
  out.shared_with_groups = (ctx.sharedWithGroups ?? []).map((share) => ({
    group_id: share.group_id,
    group_name: share.group_name,
    group_full_path: share.group_full_path,
    group_access_level: share.group_access,
    expires_at: share.expires_at,
  }));
  out.only_allow_merge_if_pipeline_succeeds = s.only_allow_merge_if_pipeline_succeeds ?? false;
  out.request_access_enabled = row.request_access_enabled;
  out.only_allow_merge_if_all_discussions_are_resolved = s.only_allow_merge_if_all_discussions_are_resolved ?? false;
  out.remove_source_branch_after_merge = s.remove_source_branch_after_merge ?? true;
  out.printing_merge_request_link_enabled = s.printing_merge_request_link_enabled ?? true;
  out.merge_method = s.merge_method ?? 'merge';
  out.suggestion_commit_message = s.suggestion_commit_message ?? null;
  if (ctx.statistics && can(subject, 'read_statistics')) {
    // No repositories are stored: every size is 0.
    out.statistics = { commit_count: row.default_branch === null ? 0 : 1, storage_size: 0, repository_size: 0, wiki_size: 0, lfs_objects_size: 0, job_artifacts_size: 0 };
  }
  // GitLab: unset at project level, Auto DevOps follows the instance setting (on by default).
  out.auto_devops_enabled = s.auto_devops_enabled ?? true;
  out.auto_devops_deploy_strategy = s.auto_devops_deploy_strategy ?? 'continuous';
  out.autoclose_referenced_issues = s.autoclose_referenced_issues ?? true;
  if (ctx.permissions) {
    out.permissions = { project_access: memberAccess(ctx.permissions.projectAccess), group_access: memberAccess(ctx.permissions.groupAccess) };
  }
  putEeFields(out, s, config);
  return out;
}

/** EE::API::Entities::Project (12.10): each field where the feature it belongs to is licensed. */
function putEeFields(out: Fields, s: ReturnType<typeof settingsOf>, config: Config) {
  const { plan } = config;
  if (licensed(plan, 'merge_request_approvers')) out.approvals_before_merge = s.approvals_before_merge ?? 0;
  if (licensed(plan, 'repository_mirrors')) out.mirror = s.mirror ?? false;
  if (licensed(plan, 'external_authorization_service_api_management')) {
    out.external_authorization_classification_label = s.external_authorization_classification_label ?? null;
  }
  if (licensed(plan, 'packages')) out.packages_enabled = s.packages_enabled ?? true;
  if (licensed(plan, 'service_desk')) {
    out.service_desk_enabled = s.service_desk_enabled ?? false;
    out.service_desk_address = null;
  }
  if (licensed(plan, 'adjourned_deletion_for_projects_and_groups')) out.marked_for_deletion_at = null;
}

// ───────────────────────────── Pages of projects ─────────────────────────────

export interface ProjectsView {
  /** BasicProjectDetails instead of Project. */
  readonly simple?: boolean;
  /** ProjectWithAccess: the viewer's permissions (signed-in callers). */
  readonly withAccess?: boolean;
  /**
   * The single-project view's group_access: the highest membership among the namespace and
   * its ancestors (GitLab: highest_group_member); lists show the namespace's own.
   */
  readonly single?: boolean;
  /** user_can_admin_project, with the project's runners token. */
  readonly adminTokens?: ReadonlyMap<number, string>;
  /** Namespace rows the route already holds (the listed group's): not read again. */
  readonly namespaces?: readonly NamespaceRow[];
  readonly customAttributes?: boolean;
  readonly statistics?: boolean;
  readonly license?: boolean;
}

/**
 * Serialises projects as one view for one viewer, loading what the records need in a few
 * queries. Groups use it for GET /groups/:id's `projects` and `shared_projects`.
 */
export async function presentProjects(db: Db, config: Config, viewer: Viewer | null, rows: readonly ProjectRow[], view: ProjectsView = {}) {
  const data = await projectPresentationData(db, viewer, rows, view.namespaces);
  const sources = view.simple ? new Map<number, Fields>() : await forkSources(db, config, viewer, rows);
  return rows.map((row) => {
    const namespace = data.namespaces.get(row.namespace_id);
    let permissions: ProjectEntityContext['permissions'];
    if (view.withAccess && viewer) {
      let groupAccess: number | null = null;
      if (namespace?.kind === 'group') {
        const ids = view.single ? row.traversal_ids : [row.namespace_id];
        for (const id of ids) {
          const accessLevel = data.groupMembers.get(id);
          if (accessLevel !== undefined && (groupAccess === null || accessLevel > groupAccess)) groupAccess = accessLevel;
        }
      }
      permissions = { projectAccess: data.projectMembers.get(row.id) ?? null, groupAccess };
    }
    const ctx: ProjectEntityContext = {
      config,
      viewer,
      role: data.roles.get(row.id) ?? null,
      namespace,
      owner: data.owners.get(row.namespace_id),
      sharedWithGroups: data.shares.get(row.id) ?? [],
      canAdmin: view.adminTokens?.has(row.id) ?? false,
      runnersToken: view.adminTokens?.get(row.id),
      permissions,
      // GitLab: projects have no custom attributes here; an administrator who asks gets none.
      customAttributes: view.customAttributes ? [] : undefined,
      statistics: view.statistics ?? false,
      license: view.license ?? false,
      forkedFrom: row.forked_from_project_id === null ? undefined : sources.get(row.forked_from_project_id),
    };
    return view.simple ? toSimpleProject(row, ctx) : toProject(row, ctx);
  });
}

/** GitLab 12.10's `forked_from_project`: the sources of the forks among `rows` that the viewer may read, as BasicProjectDetails. */
async function forkSources(db: Db, config: Config, viewer: Viewer | null, rows: readonly ProjectRow[]): Promise<Map<number, Fields>> {
  const ids = [...new Set(rows.flatMap((r) => (r.forked_from_project_id === null ? [] : [r.forked_from_project_id])))];
  if (ids.length === 0) return new Map();
  const readable = await projectListQuery(db, viewer, {}).where('projects.id', 'in', ids).execute();
  const presented = await presentProjects(db, config, viewer, readable, { simple: true });
  return new Map(readable.map((source, i) => [source.id, presented[i]!]));
}

/**
 * Entities::BasicProjectDetails of the one project a route already holds, with the caller's
 * level on it (what records of the project's own resources embed): only its namespace, and a
 * personal namespace's owner, are read.
 */
export async function presentProjectBasic(db: Db, config: Config, project: { row: ProjectRow; viewer: Viewer | null; role: number | null }) {
  // One statement: the namespace and what of a personal namespace's owner it shows (the avatar).
  const found = await db
    .selectFrom('namespaces')
    .leftJoin('users', (join) => join.onRef('users.id', '=', 'namespaces.owner_id').on('namespaces.kind', '=', 'user'))
    .selectAll('namespaces')
    .select(['users.avatar_url as owner_avatar_url', 'users.email as owner_email'])
    .where('namespaces.id', '=', project.row.namespace_id)
    .executeTakeFirst();
  if (!found) return toSimpleProject(project.row, { config, viewer: project.viewer, role: project.role, namespace: undefined });
  const { owner_avatar_url, owner_email, ...namespace } = found;
  const owner = owner_email === null ? undefined : { avatar_url: owner_avatar_url, email: owner_email };
  return toSimpleProject(project.row, { config, viewer: project.viewer, role: project.role, namespace, owner });
}

/** GitLab's Entities::ProjectGroupLink. */
export const toProjectGroupLink = (link: { id: number; project_id: number; group_id: number; group_access: number; expires_at: string | null }) => ({
  id: link.id,
  project_id: link.project_id,
  group_id: link.group_id,
  group_access: link.group_access,
  expires_at: link.expires_at,
});
