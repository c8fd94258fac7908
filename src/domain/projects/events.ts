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
} satisfies EventSchemas;

export type ProjectEvent = EventOf<typeof projectEvents>;

/** Schema version 2 of ProjectUpdated added the full path and name after and the audited values before; older events did not record them. */
export const projectUpcasters: Upcasters<typeof projectEvents> = {
  ProjectUpdated: { 1: (data: object) => ({ ...data, path_with_namespace: null, name_with_namespace: null, previous: null }) },
};

export const projectEventIndex = (event: ProjectEvent): FeedIndex => ({ projectId: event.data.id, targetType: 'Project', targetId: event.data.id });
