import { z } from 'zod';
import { VISIBILITIES } from '../access.js';
import type { EventOf, EventSchemas, FeedIndex, Upcasters } from '../events.js';
import { uploadRef } from '../uploads.js';
import { projectChanges, projectSettings } from './settings.js';

/** One aggregate per project, stream `project-<id>`. */
export const projectStreamId = (id: number) => `project-${id}`;

const ofProject = { id: z.int() };
const star = { ...ofProject, user_id: z.int() };

export const projectEvents = {
  ProjectCreated: projectSettings.extend({
    ...ofProject,
    namespace_id: z.int(),
    creator_id: z.int(),
    /** The namespace when the project was created (the projector follows later renames). */
    namespace_kind: z.enum(['user', 'group']),
    traversal_ids: z.array(z.int()).readonly(),
    path_with_namespace: z.string(),
    name_with_namespace: z.string(),
    /** initialize_with_readme: a first commit with README.md on the default branch. */
    readme: z.boolean(),
    /** The repository's HEAD; null while the repository is empty. */
    default_branch: z.string().nullable(),
  }),
  ProjectUpdated: z.strictObject({
    ...ofProject,
    changes: projectChanges,
    /**
     * What the audit shows of a change of visibility, path or name (GitLab's
     * ProjectChangesAuditor): the project's full path and name after the event, and its
     * visibility, full path and full name before. Null in events stored before schema version 2.
     */
    path_with_namespace: z.string().nullable(),
    name_with_namespace: z.string().nullable(),
    previous: z.strictObject({ visibility: z.enum(VISIBILITIES), path_with_namespace: z.string(), name_with_namespace: z.string() }).nullable(),
  }),
  ProjectArchived: z.strictObject(ofProject),
  ProjectUnarchived: z.strictObject(ofProject),
  ProjectStarred: z.strictObject(star),
  ProjectUnstarred: z.strictObject(star),
  /** DELETE /projects/:id: hidden at once (pending_delete); a reactor removes it. */
  ProjectDeletionScheduled: z.strictObject({ ...ofProject, path_with_namespace: z.string() }),
  ProjectDeleted: z.strictObject({ ...ofProject, namespace_id: z.int(), path_with_namespace: z.string() }),
  /** GitLab: `avatar` of POST /projects and PUT /projects/:id; the bytes are in `uploads`, under `avatar.sha256`. */
  ProjectAvatarChanged: z.strictObject({ ...ofProject, avatar: uploadRef }),
  /**
   * POST /projects/:id/share (GitLab's ProjectGroupLink): the group's members get access to the
   * project, capped by `group_access`, until `expires_at` (a date, or null). `link_id` is the
   * link's own id; `path_with_namespace` is what the audit shows as its target.
   */
  ProjectGroupLinkCreated: z.strictObject({
    ...ofProject,
    link_id: z.int(),
    group_id: z.int(),
    group_access: z.int(),
    expires_at: z.iso.date().nullable(),
    path_with_namespace: z.string(),
  }),
  /** DELETE /projects/:id/share/:group_id. */
  ProjectGroupLinkDeleted: z.strictObject({ ...ofProject, link_id: z.int(), group_id: z.int(), path_with_namespace: z.string() }),
  /** The project is a fork of another (POST /projects/:id/fork with the fork's creation, POST /projects/:id/fork/:forked_from_id): src/domain/projects/forks.ts. */
  ProjectForkLinked: z.strictObject({ ...ofProject, forked_from_project_id: z.int() }),
  /** DELETE /projects/:id/fork (Projects::UnlinkForkService). */
  ProjectForkUnlinked: z.strictObject({ ...ofProject, forked_from_project_id: z.int() }),
  /**
   * PUT /projects/:id/transfer (Projects::TransferService): the project in another namespace;
   * `visibility` lowered to the new group's when it was above it (else null);
   * `previous_path_with_namespace` is what the audit shows it moved from.
   */
  ProjectTransferred: z.strictObject({
    ...ofProject,
    namespace_id: z.int(),
    previous_namespace_id: z.int(),
    traversal_ids: z.array(z.int()).readonly(),
    path_with_namespace: z.string(),
    name_with_namespace: z.string(),
    visibility: z.enum(VISIBILITIES).nullable(),
    previous_path_with_namespace: z.string(),
  }),
} satisfies EventSchemas;

export type ProjectEvent = EventOf<typeof projectEvents>;

/** Schema version 2 of ProjectUpdated added the full path and name after and the audited values before; older events did not record them. */
export const projectUpcasters: Upcasters<typeof projectEvents> = {
  ProjectUpdated: { 1: (data: object) => ({ ...data, path_with_namespace: null, name_with_namespace: null, previous: null }) },
};

export const projectEventIndex = (event: ProjectEvent): FeedIndex => {
  switch (event.type) {
    // GitLab (EE::Projects::GroupLinks::CreateService, DestroyService): the audit event is the
    // shared group's, its target the project; indexed as a group's event so the group's audit lists it.
    case 'ProjectGroupLinkCreated':
    case 'ProjectGroupLinkDeleted':
      return { groupId: event.data.group_id, targetType: 'Project', targetId: event.data.id };
    default:
      return { projectId: event.data.id, targetType: 'Project', targetId: event.data.id };
  }
};
