import { sql } from 'kysely';
import type { Db } from '../database/database.js';
import { ACCESS, restrictedVisibilityError, type Viewer } from '../domain/access.js';
import { unhandled } from '../domain/decider.js';
import { invalid, notFound } from '../domain/errors.js';
import { projectNameClaim, projectPathClaim } from '../domain/projects/claims.js';
import { type ProjectCommand, type ProjectState } from '../domain/projects/decider.js';
import { type ProjectEvent, projectStreamId } from '../domain/projects/events.js';
import { DEFAULT_PROJECT_SETTINGS, type ProjectChanges, type ProjectSettings, type ProjectNamespace } from '../domain/projects/settings.js';
import { type UserEvent, userStreamId } from '../domain/users.js';
import { readStream } from '../eventstore/store.js';
import type { StoredEvent } from '../eventstore/types.js';
import { lockNamespaceRow, namespaceUnchanged } from '../projections/groups/facts.js';
import type { NamespaceRow } from '../projections/groups/tables.js';
import { claimHolder, personalProjectCount } from '../projections/projects/queries.js';
import type { ProjectRow } from '../projections/projects/tables.js';
import type { UserRow } from '../projections/users.js';
import { currentSettings } from '../projections/application-settings/queries.js';
import { handleCommands, nextId } from './kernel/handler.js';
import { firstMember, members } from '../domain/members.js';
import { causedBy } from './kernel/causation.js';
import { lockedBranchNames, readmeSpecs } from './repository.js';
import { type PendingUpload, withUpload } from './uploads.js';
import { newId, spec, run } from './kernel/run.js';
import type { CommandContext, CommandResult, CommandSpec, DeferredSpecs, Writer } from './kernel/context.js';
import { projects } from '../domain/projects/aggregate.js';
import type { Reactor } from './kernel/reactor.js';

/** The namespace's columns a project is decided on (toProjectNamespace). */
const NAMESPACE_FACTS = ['kind', 'visibility', 'full_path', 'full_name', 'traversal_ids'] as const;

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
  readonly creator: Pick<UserRow, 'id' | 'projects_limit' | 'is_admin'>;
  readonly initializeWithReadme: boolean;
  readonly defaultBranch?: string | undefined;
  /** The avatar, checked (src/commands/uploads.ts); stored with the project's events. */
  readonly avatar?: PendingUpload | undefined;
  /** POST /projects/:id/fork: the source, and the writes that give the fork its repository, committed with it (src/commands/project-forks.ts). */
  readonly fork?: { readonly from: number; readonly repository: (id: number) => readonly (CommandSpec<any, any, any> | DeferredSpecs)[] } | undefined;
}

/**
 * Creates a project. In a personal namespace its owner becomes maintainer in the same
 * transaction (GitLab: Projects::CreateService adds the namespace owner; in a group nobody
 * is added, the group's members have access).
 */
export async function createProject(w: Writer, input: CreateProjectInput): Promise<CommandResult<ProjectState>> {
  const { namespace, creator } = input;
  const personal = namespace.kind === 'user';
  // What the decision needs, read at once (a refused visibility wastes an id: ids have gaps anyway).
  const [instance, isTaken, count, id] = await Promise.all([
    currentSettings(w.ctx.db),
    taken(w.ctx.db, namespace.id, input.settings.name, input.settings.path, null),
    personal ? personalProjectCount(w.ctx.db, namespace.id) : Promise.resolve(0),
    newId(w, projects),
  ]);
  // GitLab (Project's default_value_for): Gitlab::CurrentSettings.default_project_visibility when not given;
  // Projects::CreateService then refuses a level the instance restricts, before any other check.
  const visibility = input.settings.visibility ?? (instance.default_project_visibility as ProjectSettings['visibility']);
  const restricted = restrictedVisibilityError(visibility, instance.restricted_visibility_levels as string[], creator.is_admin);
  if (restricted) throw restricted;
  // GitLab (ProjectFeature): pages are open on a public project, members-only otherwise.
  const settings: ProjectSettings = {
    ...DEFAULT_PROJECT_SETTINGS,
    visibility,
    pages_access_level: visibility === 'public' ? 'enabled' : 'private',
    ...input.settings,
  };
  // GitLab: Project#check_personal_projects_limit counts the creator's own personal projects.
  const personalLimit = personal && namespace.owner_id === creator.id ? { limit: creator.projects_limit, count } : null;
  const decide = (on: NamespaceRow): ProjectCommand => ({
    type: 'CreateProject',
    creatorId: creator.id,
    namespace: toProjectNamespace(on),
    settings,
    initializeWithReadme: input.initializeWithReadme,
    defaultBranch: input.defaultBranch ?? 'master',
    taken: isTaken,
    personalLimit,
    avatar: input.avatar?.ref,
    forkedFrom: input.fork?.from,
  });
  // The namespace as the transaction finds it (its visibility bounds the project's), locked
  // against a concurrent change or removal until the commit. Gone meanwhile: what POST
  // /projects answers for a namespace it cannot use. Or, in one round trip, as the caller
  // read it, if the transaction finds it unchanged.
  const command = async (trx: Db) => decide(await lockedNamespace(trx, namespace.id, () => invalid({ namespace: ['is not valid'] })));
  const optimistic = input.avatar ? undefined : { command: decide(namespace), unchanged: namespaceUnchanged(w.ctx.db, namespace, NAMESPACE_FACTS) };
  const newStream = { newStream: true };
  const specs: (CommandSpec<any, any, any> | DeferredSpecs)[] = [spec(projects, id, withUpload(input.avatar, command), { ...newStream, optimistic })];
  if (personal && namespace.owner_id !== null) {
    specs.push(spec(members, { type: 'Project', id }, firstMember(namespace.owner_id, ACCESS.MAINTAINER, w.metadata.actor_id ?? null), newStream));
  }
  if (input.initializeWithReadme) {
    const branch = input.defaultBranch ?? 'master';
    specs.push(...readmeSpecs(w.ctx, { projectId: id, branch, name: settings.name, description: settings.description ?? null, creatorId: creator.id }));
  }
  if (input.fork) specs.push(...input.fork.repository(id));
  const [project] = await handleCommands(w, specs);
  return project as CommandResult<ProjectState>;
}

/** PUT /projects/:id: applies changed settings (authorized by the caller, `actor`). */
export async function updateProject(
  w: Writer,
  project: ProjectRow,
  namespace: NamespaceRow,
  changes: ProjectChanges,
  actor: Viewer,
  avatar?: PendingUpload,
) {
  // Projects::UpdateService#validate!: a new visibility the instance restricts is refused first.
  if (changes.visibility !== undefined && changes.visibility !== project.visibility) {
    const restricted = restrictedVisibilityError(changes.visibility, (await currentSettings(w.ctx.db)).restricted_visibility_levels as string[], actor.isAdmin);
    if (restricted) throw restricted;
  }
  const isTaken = await taken(w.ctx.db, project.namespace_id, changes.name, changes.path, project.id);
  // A visibility change is bounded by the namespace's: read and locked in the transaction.
  const command = async (trx: Db): Promise<ProjectCommand> => {
    // Its namespace gone meanwhile, the project is being deleted with it.
    const current = changes.visibility === undefined ? namespace : await lockedNamespace(trx, namespace.id, () => notFound('Project'));
    // A new default branch must exist: the repository's branches, locked against a concurrent deletion.
    const branches = changes.default_branch === undefined ? [] : await lockedBranchNames(trx, project.id);
    return { type: 'UpdateProject', changes, namespace: toProjectNamespace(current), taken: isTaken, branches, avatar: avatar?.ref };
  };
  return run(w, projects, project.id, withUpload(avatar, command));
}

/** The namespace's row locked for the transaction; `gone()` is thrown when it is being deleted. */
async function lockedNamespace(trx: Db, id: number, gone: () => Error): Promise<NamespaceRow> {
  const row = await lockNamespaceRow(trx, id, 'share');
  if (!row || row.pending_delete) throw gone();
  return row;
}

// ───────────────────────────── Asynchronous removal ─────────────────────────────

type RemovalTrigger = Extract<ProjectEvent, { type: 'ProjectDeletionScheduled' }> | Extract<UserEvent, { type: 'UserDeleted' }>;
type UserCreatedData = Extract<UserEvent, { type: 'UserCreated' }>['data'];


/**
 * GitLab's ProjectDestroyWorker: finishes DELETE /projects/:id; and Users::DestroyService,
 * which removes a deleted user's personal projects. Idempotent: a project already gone
 * appends nothing, and the runner keeps a receipt per triggering event.
 */
export const projectRemovalReactor: Reactor = {
  name: 'project-removal',
  handles: ['ProjectDeletionScheduled', 'UserDeleted'] satisfies RemovalTrigger['type'][],
  async react(stored: StoredEvent, ctx: CommandContext) {
    const event = stored as unknown as RemovalTrigger;
    const w = causedBy(ctx, stored);
    const deleteProject = (id: number) => run(w, projects, id, { type: 'DeleteProject' });
    switch (event.type) {
      case 'ProjectDeletionScheduled':
        await deleteProject(event.data.id);
        return;
      case 'UserDeleted': {
        const created = (await readStream(ctx.db, userStreamId(event.data.id))).find((e) => e.type === 'UserCreated');
        if (!created) return;
        const { namespace_id } = created.data as UserCreatedData;
        const { rows } = await sql<{ id: number }>`select id from projects where namespace_id = ${namespace_id} order by id`.execute(ctx.db);
        for (const { id } of rows) await deleteProject(id);
        return;
      }
      default:
        return unhandled(event);
    }
  },
};

/** POST /projects/:id/share: a new link on the project's stream, its id from project_group_links_id_seq. */
export async function shareProjectWithGroup(
  w: Writer,
  project: ProjectRow,
  share: { readonly groupId: number; readonly groupAccess: number; readonly expiresAt: string | null },
): Promise<number> {
  const linkId = await nextId(w.ctx.db, 'project_group_links_id_seq');
  const command: ProjectCommand = {
    type: 'ShareProjectWithGroup',
    linkId,
    ...share,
    namespaceTraversalIds: project.traversal_ids,
    pathWithNamespace: project.path_with_namespace,
  };
  await run(w, projects, project.id, command);
  return linkId;
}
