import { allowedUnder } from '../access.js';
import { conflict, invalid } from '../errors.js';
import type { ProjectEvent } from './events.js';
import type { ProjectNamespace } from './settings.js';

/**
 * A project's fork relation and its move to another namespace: the decisions of
 * LinkFork, UnlinkFork and TransferProject on the project's stream (./decider.ts calls them).
 */

export type ForkCommand =
  /** POST /projects/:id/fork/:forked_from_id (Projects::ForkService#link_existing_project). */
  | { readonly type: 'LinkFork'; readonly forkedFromId: number }
  /** DELETE /projects/:id/fork (Projects::UnlinkForkService): nothing when the project is no fork. */
  | { readonly type: 'UnlinkFork' }
  /**
   * PUT /projects/:id/transfer (Projects::TransferService#transfer). `taken`: a project of the
   * new namespace has the name or the path (read before deciding; the claims hold it at the commit);
   * `registryTags`: the project's container registry holds tags.
   */
  | { readonly type: 'TransferProject'; readonly namespace: ProjectNamespace; readonly taken: boolean; readonly registryTags: boolean };

/** What these decisions read of the project's state. */
export interface ForkState {
  readonly id: number;
  readonly namespaceId: number | null;
  readonly forkedFrom: number | null;
  readonly pathWithNamespace: string | null;
  readonly settings: { readonly name: string; readonly path: string; readonly visibility: ProjectNamespace['visibility'] } | null;
}

/** GitLab: Projects::TransferService's errors are the project's `new_namespace` errors (the API's "Failed to transfer project {…}"). */
const transferError = (message: string) => invalid({ new_namespace: [message] });

export function decideFork(state: ForkState, command: ForkCommand): ProjectEvent[] {
  const id = state.id;
  switch (command.type) {
    case 'LinkFork':
      // GitLab answers 409 "Project already forked" when the project is a fork already.
      if (state.forkedFrom !== null) throw conflict('Project already forked');
      return [{ type: 'ProjectForkLinked', data: { id, forked_from_project_id: command.forkedFromId } }];
    case 'UnlinkFork':
      return state.forkedFrom === null ? [] : [{ type: 'ProjectForkUnlinked', data: { id, forked_from_project_id: state.forkedFrom } }];
    case 'TransferProject':
      return [transfer(state, command)];
  }
}

function transfer(state: ForkState, { namespace, taken, registryTags }: Extract<ForkCommand, { type: 'TransferProject' }>): ProjectEvent {
  const settings = state.settings!;
  // GitLab (allowed_transfer?): the namespace must be another one.
  if (namespace.id === state.namespaceId) throw transferError('Transfer failed, please contact an admin.');
  if (taken) throw transferError('Project with same name or path in target namespace already exists');
  // GitLab: "We currently don't support renaming repository if it contains tags in container registry".
  if (registryTags) throw transferError('Project cannot be transferred, because tags are present in its container registry');
  // GitLab: the visibility falls to the new group's unless the group allows it (visibility_level_allowed_by_group?).
  const lowered = namespace.kind === 'group' && !allowedUnder(settings.visibility, namespace.visibility);
  return {
    type: 'ProjectTransferred',
    data: {
      id: state.id,
      namespace_id: namespace.id,
      previous_namespace_id: state.namespaceId!,
      traversal_ids: namespace.traversal_ids,
      path_with_namespace: `${namespace.full_path}/${settings.path}`,
      name_with_namespace: `${namespace.full_name} / ${settings.name}`,
      visibility: lowered ? namespace.visibility : null,
      previous_path_with_namespace: state.pathWithNamespace ?? settings.path,
    },
  };
}
