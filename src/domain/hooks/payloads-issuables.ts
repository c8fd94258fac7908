import { projectHookAttrs, sidekiqTime, userHookAttrs, type ProjectFacts, type UserFacts } from './payloads.js';

/**
 * What the "Issue Hook" and the "Merge Request Hook" share (GitLab 12.10's
 * Gitlab::HookData::IssuableBuilder#build and Issuable#to_hook_data): the envelope around an
 * issuable's hook attributes, its labels, and the `changes` of an update.
 */

export interface LabelFacts {
  readonly id: number;
  readonly title: string;
  readonly color: string;
  readonly projectId: number;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly description: string | null;
}

/** Label#hook_attrs (12.10). */
export const labelHookAttrs = (l: LabelFacts) => ({
  id: l.id,
  title: l.title,
  color: l.color,
  project_id: l.projectId,
  created_at: sidekiqTime(l.createdAt),
  updated_at: sidekiqTime(l.updatedAt),
  template: false,
  description: l.description,
  type: 'ProjectLabel',
  group_id: null,
});

/** What an issuable's envelope reads of it besides its own hook attributes. */
export interface IssuableFacts {
  readonly labels: readonly LabelFacts[];
  readonly assignees: readonly UserFacts[];
}

/** The `changes` of an update: each changed attribute's previous and current value (IssuableBuilder#final_changes). */
export type IssuableChanges = Readonly<Record<string, { readonly previous: unknown; readonly current: unknown }>>;

/**
 * IssuableBuilder#build: `object_kind`, the user, the project, the issuable's hook attributes
 * with the action, its labels, the changes, the deprecated `repository`, and `assignees` only
 * when there are some.
 */
export function issuableData(kind: 'issue' | 'merge_request', issuable: IssuableFacts, project: ProjectFacts, user: UserFacts, attributes: object, changes: IssuableChanges) {
  const data: Record<string, unknown> = {
    object_kind: kind,
    user: userHookAttrs(user),
    project: projectHookAttrs(project),
    object_attributes: attributes,
    labels: issuable.labels.map(labelHookAttrs),
    changes,
    repository: { name: project.name, url: project.sshUrl, description: project.description, homepage: project.webUrl },
  };
  if (issuable.assignees.length > 0) data.assignees = issuable.assignees.map(userHookAttrs);
  return data;
}

/**
 * The changes of an update (Issuable#to_hook_data, then final_changes): for each attribute the
 * update sent (`changed`, by its column name), its value before and after; labels and
 * assignees as their hook attributes.
 */
export function issuableChanges<F extends IssuableFacts>(
  changed: { readonly label_ids?: unknown; readonly assignee_ids?: unknown },
  before: F,
  after: F,
  attributes: Readonly<Record<string, (issuable: F) => unknown>>,
): IssuableChanges {
  const out: Record<string, { previous: unknown; current: unknown }> = {};
  for (const [key, read] of Object.entries(attributes)) {
    if ((changed as Record<string, unknown>)[key] !== undefined) out[key] = { previous: read(before), current: read(after) };
  }
  if (changed.label_ids !== undefined) out.labels = { previous: before.labels.map(labelHookAttrs), current: after.labels.map(labelHookAttrs) };
  if (changed.assignee_ids !== undefined) out.assignees = { previous: before.assignees.map(userHookAttrs), current: after.assignees.map(userHookAttrs) };
  return out;
}
