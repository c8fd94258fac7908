import { z } from 'zod';
import { type ClaimChanges, type Decider, NO_CLAIMS, unhandled } from './decider.js';
import type { EventOf, EventSchemas } from './events.js';
import { invalid, recordNotFound } from './errors.js';
import { defineAggregate } from './aggregate.js';
/** ProtectedTag::CreateAccessLevel.allowed_access_levels: maintainers, developers, no one. */
export const PROTECTED_TAG_LEVELS = [40, 30, 0] as const;

/**
 * Protected tags of a project (GitLab's ProtectedTag with its create access levels): one
 * aggregate per protected tag, stream `protected-tag-<id>`; its (project, name) is a
 * uniqueness claim. A name is an exact tag name or a wildcard (`v*`), matched as protected
 * branches are (src/domain/repository/push-access.ts).
 */

const ofTag = { id: z.int(), project_id: z.int() };

export const protectedTagEvents = {
  /** `create_access_levels`: the roles that may create a matching tag (GitLab 12's API gives one). */
  ProtectedTagCreated: z.strictObject({ ...ofTag, name: z.string(), create_access_levels: z.array(z.strictObject({ access_level: z.int() })) }),
  ProtectedTagDeleted: z.strictObject({ ...ofTag, name: z.string() }),
} satisfies EventSchemas;

export type ProtectedTagEvent = EventOf<typeof protectedTagEvents>;

export interface ProtectedTagState {
  readonly id: number;
  /** null: not protected (never, or unprotected). */
  readonly project_id: number | null;
  readonly name: string | null;
}

export const protectedTagStreamId = (id: number) => `protected-tag-${id}`;

export type ProtectedTagCommand =
  | { readonly type: 'ProtectTag'; readonly projectId: number; readonly name: string; readonly createAccessLevel: number }
  | { readonly type: 'UnprotectTag' };

const initialState = (id: number): ProtectedTagState => ({ id, project_id: null, name: null });

function evolve(state: ProtectedTagState, event: ProtectedTagEvent): ProtectedTagState {
  switch (event.type) {
    case 'ProtectedTagCreated':
      return { ...state, project_id: event.data.project_id, name: event.data.name };
    case 'ProtectedTagDeleted':
      return initialState(state.id);
    default:
      return state;
  }
}

/** ProtectedTag's uniqueness validation (`validates :name, uniqueness: { scope: :project_id }`), as full_messages words it. */
export const NAME_TAKEN = 'Name has already been taken';

function decide(command: ProtectedTagCommand, state: ProtectedTagState): ProtectedTagEvent[] {
  switch (command.type) {
    case 'ProtectTag': {
      if (state.project_id !== null) throw invalid({ name: ['has already been taken'] });
      const errors: Record<string, string[]> = {};
      if (command.name.trim() === '') errors.name = ["can't be blank"];
      if (!(PROTECTED_TAG_LEVELS as readonly number[]).includes(command.createAccessLevel)) errors['create_access_levels.access_level'] = ['is not included in the list'];
      if (Object.keys(errors).length > 0) throw invalid(errors);
      return [
        {
          type: 'ProtectedTagCreated',
          data: { id: state.id, project_id: command.projectId, name: command.name, create_access_levels: [{ access_level: command.createAccessLevel }] },
        },
      ];
    }
    case 'UnprotectTag':
      if (state.project_id === null || state.name === null) throw recordNotFound('ProtectedTag');
      return [{ type: 'ProtectedTagDeleted', data: { id: state.id, project_id: state.project_id, name: state.name } }];
    default:
      return unhandled(command);
  }
}

export const protectedTagDecider: Decider<ProtectedTagCommand, ProtectedTagEvent, ProtectedTagState, number> = { initialState, evolve, decide };

/** A tag name is protected once per project (exact: git's ref names are case-sensitive). */
export const protectedTagClaim = (projectId: number, name: string) => ({ kind: 'protected_tag', key: `${projectId}/${name}`, conflictMessage: NAME_TAKEN });

function protectedTagClaims(event: ProtectedTagEvent, before: ProtectedTagState): ClaimChanges {
  switch (event.type) {
    case 'ProtectedTagCreated':
      return { acquire: [protectedTagClaim(event.data.project_id, event.data.name)], release: [] };
    case 'ProtectedTagDeleted':
      return { acquire: [], release: [protectedTagClaim(event.data.project_id, before.name ?? event.data.name)] };
    default:
      return NO_CLAIMS;
  }
}

/** One protected tag of a project (src/domain/protected-tags.ts). */
export const protectedTags = defineAggregate({
  name: 'protected_tags',
  streamId: protectedTagStreamId,
  events: protectedTagEvents,
  decider: protectedTagDecider,
  claims: protectedTagClaims,
  index: (event: ProtectedTagEvent) => ({ projectId: event.data.project_id, targetType: 'ProtectedTag', targetId: event.data.id }),
  idSequence: 'protected_tags_id_seq',
});
