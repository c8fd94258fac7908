import { sql } from 'kysely';
import type { Db } from '../database.js';
import { ACCESS } from '../domain/access.js';
import { invalid, notFound } from '../domain/errors.js';
import {
  type ProjectChanges,
  type ProjectCommand,
  type ProjectEvent,
  type ProjectNamespace,
  type ProjectSettings,
  type ProjectState,
  projectClaimRefusal,
  projectClaims,
  projectDecider,
  projectEventIndex,
  projectNameClaim,
  projectPathClaim,
  projectStreamId,
} from '../domain/projects.js';
import { readStream } from '../eventstore/store.js';
import type { EventMetadata, StoredEvent } from '../eventstore/types.js';
import { lockNamespaceRow } from '../projections/groups/facts.js';
import type { NamespaceRow } from '../projections/groups/tables.js';
import { claimHolder, personalProjectCount, type ProjectRow } from '../projections/projects.js';
import type { Reactor } from '../projections/runner.js';
import type { UserRow } from '../projections/users.js';
import { type CommandContext, type CommandResult, type CommandSpec, handleCommand, handleCommands, nextId } from './handler.js';
import { members } from './members.js';

type ProjectSpec = CommandSpec<ProjectCommand, ProjectEvent, ProjectState>;

const spec = (projectId: number, command: ProjectSpec['command'], metadata: EventMetadata): ProjectSpec => ({
  streamId: projectStreamId(projectId),
  decider: projectDecider,
  command,
  metadata,
  claims: projectClaims,
  claimRefusal: projectClaimRefusal,
  index: projectEventIndex,
});

const run = (ctx: CommandContext, projectId: number, command: ProjectSpec['command'], metadata: EventMetadata): Promise<CommandResult<ProjectState>> =>
  handleCommand(ctx, spec(projectId, command, metadata));

/** A new project's settings before the caller's: GitLab 12's column and instance defaults. */
export const DEFAULT_PROJECT_SETTINGS: Omit<ProjectSettings, 'name' | 'path'> = {
  description: null,
  // GitLab: Gitlab::CurrentSettings.default_project_visibility (private by default).
  visibility: 'private',
  tag_list: [],
  issues_access_level: 'enabled',
  repository_access_level: 'enabled',
  merge_requests_access_level: 'enabled',
  wiki_access_level: 'enabled',
  builds_access_level: 'enabled',
  snippets_access_level: 'enabled',
  pages_access_level: 'private',
  container_registry_enabled: true,
  shared_runners_enabled: true,
  lfs_enabled: true,
  public_jobs: true,
  request_access_enabled: true,
  resolve_outdated_diff_discussions: false,
  only_allow_merge_if_pipeline_succeeds: false,
  only_allow_merge_if_all_discussions_are_resolved: false,
  remove_source_branch_after_merge: true,
  printing_merge_request_link_enabled: true,
  merge_method: 'merge',
  ci_config_path: null,
  ci_default_git_depth: 50,
  build_timeout: 3600,
  build_coverage_regex: null,
  build_git_strategy: 'fetch',
  auto_cancel_pending_pipelines: 'enabled',
  auto_devops_enabled: null,
  auto_devops_deploy_strategy: 'continuous',
  autoclose_referenced_issues: true,
  suggestion_commit_message: null,
  emails_disabled: null,
  approvals_before_merge: 0,
  mirror: false,
  external_authorization_classification_label: null,
  packages_enabled: true,
  service_desk_enabled: false,
};

export const toProjectNamespace = (row: NamespaceRow): ProjectNamespace => ({
  id: row.id,
  kind: row.kind,
  visibility: row.visibility,
  full_path: row.full_path,
  full_name: row.full_name,
  traversal_ids: row.traversal_ids,
});

/** Is a name or path claim of this namespace held by a project other than `exceptId`? */
async function taken(db: Db, namespaceId: number, name: string | undefined, path: string | undefined, exceptId: number | null) {
  const heldByOther = async (claim: { kind: string; key: string } | undefined) => {
    if (!claim) return false;
    const holder = await claimHolder(db, claim.kind, claim.key);
    return holder !== undefined && (exceptId === null || holder !== projectStreamId(exceptId));
  };
  const [nameTaken, pathTaken] = await Promise.all([
    heldByOther(name === undefined ? undefined : projectNameClaim(namespaceId, name)),
    heldByOther(path === undefined ? undefined : projectPathClaim(namespaceId, path)),
  ]);
  return { name: nameTaken, path: pathTaken };
}

export interface CreateProjectInput {
  readonly settings: Pick<ProjectSettings, 'name' | 'path'> & Partial<ProjectSettings>;
  /** The namespace row (the caller has been authorized to create projects in it). */
  readonly namespace: NamespaceRow;
  readonly creator: Pick<UserRow, 'id' | 'projects_limit'>;
  readonly initializeWithReadme: boolean;
  readonly defaultBranch?: string | undefined;
}

/**
 * Creates a project. In a personal namespace its owner becomes maintainer in the same
 * transaction (GitLab: Projects::CreateService adds the namespace owner; in a group nobody
 * is added, the group's members have access).
 */
export async function createProject(ctx: CommandContext, input: CreateProjectInput, metadata: EventMetadata): Promise<CommandResult<ProjectState>> {
  const { namespace, creator } = input;
  // GitLab (ProjectFeature): pages are open on a public project, members-only otherwise.
  const visibility = input.settings.visibility ?? DEFAULT_PROJECT_SETTINGS.visibility;
  const settings: ProjectSettings = {
    ...DEFAULT_PROJECT_SETTINGS,
    pages_access_level: visibility === 'public' ? 'enabled' : 'private',
    ...input.settings,
  };
  const personal = namespace.kind === 'user';
  const [isTaken, count] = await Promise.all([
    taken(ctx.db, namespace.id, settings.name, settings.path, null),
    personal ? personalProjectCount(ctx.db, namespace.id) : Promise.resolve(0),
  ]);
  // GitLab: Project#check_personal_projects_limit counts the creator's own personal projects.
  const personalLimit = personal && namespace.owner_id === creator.id ? { limit: creator.projects_limit, count } : null;
  const id = await nextId(ctx.db, 'projects_id_seq');
  // The namespace as the transaction finds it (its visibility bounds the project's), locked
  // against a concurrent change or removal until the commit.
  const command = async (trx: Db): Promise<ProjectCommand> => ({
    type: 'CreateProject',
    id,
    creatorId: creator.id,
    // Gone meanwhile: what POST /projects answers for a namespace it cannot use.
    namespace: toProjectNamespace(await lockedNamespace(trx, namespace.id, () => invalid({ namespace: ['is not valid'] }))),
    settings,
    initializeWithReadme: input.initializeWithReadme,
    defaultBranch: input.defaultBranch ?? 'master',
    taken: isTaken,
    personalLimit,
  });
  const specs: CommandSpec<any, any, any>[] = [spec(id, command, metadata)];
  if (personal && namespace.owner_id !== null) {
    const ownerId = namespace.owner_id;
    specs.push(members.spec({ type: 'Project', id }, { type: 'AddMember', userId: ownerId, accessLevel: ACCESS.MAINTAINER, expiresAt: null, actorId: metadata.actor_id ?? ownerId, inherited: null }, metadata));
  }
  const [project] = await handleCommands(ctx, specs);
  return project as CommandResult<ProjectState>;
}

/** PUT /projects/:id: applies changed settings (authorized by the caller). */
export async function updateProject(ctx: CommandContext, project: ProjectRow, namespace: NamespaceRow, changes: ProjectChanges, metadata: EventMetadata) {
  const isTaken = await taken(ctx.db, project.namespace_id, changes.name, changes.path, project.id);
  // A visibility change is bounded by the namespace's: read and locked in the transaction.
  const command = async (trx: Db): Promise<ProjectCommand> => {
    // Its namespace gone meanwhile, the project is being deleted with it.
    const current = changes.visibility === undefined ? namespace : await lockedNamespace(trx, namespace.id, () => notFound('Project'));
    return { type: 'UpdateProject', changes, namespace: toProjectNamespace(current), taken: isTaken };
  };
  return run(ctx, project.id, command, metadata);
}

/** The namespace's row locked for the transaction; `gone()` is thrown when it is being deleted. */
async function lockedNamespace(trx: Db, id: number, gone: () => Error): Promise<NamespaceRow> {
  const row = await lockNamespaceRow(trx, id, 'share');
  if (!row || row.pending_delete) throw gone();
  return row;
}

export const archiveProject = (ctx: CommandContext, projectId: number, metadata: EventMetadata) => run(ctx, projectId, { type: 'ArchiveProject' }, metadata);
export const unarchiveProject = (ctx: CommandContext, projectId: number, metadata: EventMetadata) =>
  run(ctx, projectId, { type: 'UnarchiveProject' }, metadata);
export const starProject = (ctx: CommandContext, projectId: number, userId: number, metadata: EventMetadata) =>
  run(ctx, projectId, { type: 'StarProject', userId }, metadata);
export const unstarProject = (ctx: CommandContext, projectId: number, userId: number, metadata: EventMetadata) =>
  run(ctx, projectId, { type: 'UnstarProject', userId }, metadata);

/** DELETE /projects/:id: hides the project now; the removal reactor finishes (202). */
export const scheduleProjectDeletion = (ctx: CommandContext, projectId: number, metadata: EventMetadata) =>
  run(ctx, projectId, { type: 'ScheduleProjectDeletion' }, metadata);

/**
 * Removes a project for good (ProjectDeleted): the end of an asynchronous removal, also used
 * by a group's removal for each of its projects. Appends nothing for a project already gone.
 */
export const deleteProject = (ctx: CommandContext, projectId: number, metadata: EventMetadata) => run(ctx, projectId, { type: 'DeleteProject' }, metadata);

// ───────────────────────────── Asynchronous removal ─────────────────────────────

const causedBy = (event: StoredEvent): EventMetadata => ({
  ...event.metadata,
  causation_id: event.eventId,
  correlation_id: event.metadata.correlation_id ?? event.eventId,
});

/**
 * GitLab's ProjectDestroyWorker: finishes DELETE /projects/:id; and Users::DestroyService,
 * which removes a deleted user's personal projects. Idempotent: a project already gone
 * appends nothing, and the runner keeps a receipt per triggering event.
 */
export const projectRemovalReactor: Reactor<CommandContext> = {
  name: 'project-removal',
  handles: ['ProjectDeletionScheduled', 'UserDeleted'],
  async react(event: StoredEvent, ctx: CommandContext) {
    const metadata = causedBy(event);
    if (event.type === 'ProjectDeletionScheduled') {
      await deleteProject(ctx, (event.data as { id: number }).id, metadata);
      return;
    }
    const userId = (event.data as { id: number }).id;
    const created = (await readStream(ctx.db, `user-${userId}`)).find((e) => e.type === 'UserCreated');
    const namespaceId = (created?.data as { namespace_id?: number } | undefined)?.namespace_id;
    if (namespaceId === undefined) return;
    const { rows } = await sql<{ id: number }>`select id from projects where namespace_id = ${namespaceId} order by id`.execute(ctx.db);
    for (const { id } of rows) await deleteProject(ctx, id, metadata);
  },
};

export { projectRunnersToken } from './runners-tokens.js';
