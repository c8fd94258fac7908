import { describe, expect, it } from 'vitest';
import { projectClaims } from '../../src/domain/projects/claims.js';
import { type CreateProjectCommand, projectDecider } from '../../src/domain/projects/decider.js';
import type { ProjectEvent } from '../../src/domain/projects/events.js';
import { DEFAULT_PROJECT_SETTINGS, type ProjectNamespace } from '../../src/domain/projects/settings.js';
import { deciderSpec, rejected } from '../support/decider.js';

// The fork relation and the transfer on a project's stream: given events / when command / then events or error.

const acme: ProjectNamespace = { id: 7, kind: 'group', visibility: 'public', full_path: 'acme', full_name: 'Acme', traversal_ids: [7] };
const secret: ProjectNamespace = { id: 9, kind: 'group', visibility: 'private', full_path: 'acme/secret', full_name: 'Acme / Secret', traversal_ids: [7, 9] };

const create = (overrides: Partial<CreateProjectCommand> = {}): CreateProjectCommand => ({
  type: 'CreateProject',
  creatorId: 5,
  namespace: acme,
  settings: { ...DEFAULT_PROJECT_SETTINGS, name: 'Site', path: 'site', visibility: 'public' },
  initializeWithReadme: false,
  defaultBranch: 'master',
  taken: { name: false, path: false },
  personalLimit: null,
  ...overrides,
});

const created = projectDecider.decide(create(), projectDecider.initialState(11)) as ProjectEvent[];
const given = (...history: ProjectEvent[]) => deciderSpec(projectDecider).on(11).given(...created, ...history);
const linked: ProjectEvent = { type: 'ProjectForkLinked', data: { id: 11, forked_from_project_id: 3 } };

describe('forks', () => {
  it('creates a fork with its relation', () => {
    const events = projectDecider.decide(create({ forkedFrom: 3 }), projectDecider.initialState(11)) as ProjectEvent[];
    expect(events.map((e) => e.type)).toEqual(['ProjectCreated', 'ProjectForkLinked']);
    expect(events[1]).toEqual(linked);
  });

  it('links a project once: then "Project already forked"', () => {
    given().when({ type: 'LinkFork', forkedFromId: 3 }).then([linked]);
    given(linked).when({ type: 'LinkFork', forkedFromId: 4 }).then(rejected('conflict', { text: 'Project already forked' }));
  });

  it('unlinks a fork, and nothing when it is none', () => {
    given(linked).when({ type: 'UnlinkFork' }).then([{ type: 'ProjectForkUnlinked', data: { id: 11, forked_from_project_id: 3 } }]);
    given().when({ type: 'UnlinkFork' }).then([]);
  });
});

describe('TransferProject', () => {
  const transfer = { type: 'TransferProject', namespace: secret, taken: false, registryTags: false } as const;
  const transferred: ProjectEvent = {
    type: 'ProjectTransferred',
    data: {
      id: 11,
      namespace_id: 9,
      previous_namespace_id: 7,
      traversal_ids: [7, 9],
      path_with_namespace: 'acme/secret/site',
      name_with_namespace: 'Acme / Secret / Site',
      visibility: 'private',
      previous_path_with_namespace: 'acme/site',
    },
  };

  it("moves the project, its visibility lowered to the group's", () => {
    given().when(transfer).then([transferred]);
  });

  it('moves the name and path claims to the new namespace', () => {
    const state = [...created].reduce(projectDecider.evolve, projectDecider.initialState(11));
    const claims = projectClaims(transferred as Extract<ProjectEvent, { type: 'ProjectTransferred' }>, state);
    expect(claims.acquire.map((c) => c.key)).toEqual(['9/Site', '9/site']);
    expect(claims.release.map((c) => c.key)).toEqual(['7/Site', '7/site']);
  });

  it("refuses GitLab's cases as the project's new_namespace errors, in TransferService's order", () => {
    const error = (message: string) => rejected('invalid', { fields: { new_namespace: [message] } });
    given().when({ ...transfer, namespace: acme }).then(error('Transfer failed, please contact an admin.'));
    given().when({ ...transfer, taken: true, registryTags: true }).then(error('Project with same name or path in target namespace already exists'));
    given().when({ ...transfer, registryTags: true }).then(error('Project cannot be transferred, because tags are present in its container registry'));
  });
});
