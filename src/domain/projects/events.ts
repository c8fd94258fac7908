import { z } from 'zod';
import type { EventOf, EventSchemas, FeedIndex } from '../events.js';
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
  ProjectUpdated: z.strictObject({ ...ofProject, changes: projectChanges }),
  ProjectArchived: z.strictObject(ofProject),
  ProjectUnarchived: z.strictObject(ofProject),
  ProjectStarred: z.strictObject(star),
  ProjectUnstarred: z.strictObject(star),
  /** DELETE /projects/:id: hidden at once (pending_delete); a reactor removes it. */
  ProjectDeletionScheduled: z.strictObject({ ...ofProject, path_with_namespace: z.string() }),
  ProjectDeleted: z.strictObject({ ...ofProject, namespace_id: z.int(), path_with_namespace: z.string() }),
} satisfies EventSchemas;

export type ProjectEvent = EventOf<typeof projectEvents>;

export const projectEventIndex = (event: ProjectEvent): FeedIndex => ({ projectId: event.data.id, targetType: 'Project', targetId: event.data.id });
