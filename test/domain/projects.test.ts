import { describe, expect, it } from 'vitest';
import { projectClaims } from '../../src/domain/projects/claims.js';
import { type CreateProjectCommand, projectDecider } from '../../src/domain/projects/decider.js';
import type { ProjectEvent } from '../../src/domain/projects/events.js';
import { DEFAULT_PROJECT_SETTINGS, type ProjectSettings, type ProjectNamespace } from '../../src/domain/projects/settings.js';
import { NAME_FORMAT_MESSAGE, PATH_FORMAT_MESSAGE, parameterize } from '../../src/domain/projects/validation.js';
import { deciderSpec, rejected } from '../support/decider.js';

// given events / when command / then events or error — no database.

const settings = (overrides: Partial<ProjectSettings> = {}): ProjectSettings => ({ ...DEFAULT_PROJECT_SETTINGS, name: 'Site', path: 'site', ...overrides });

const group = (overrides: Partial<ProjectNamespace> = {}): ProjectNamespace => ({
  id: 7,
  kind: 'group',
  visibility: 'internal',
  full_path: 'acme/web',
  full_name: 'Acme / Web',
  traversal_ids: [3, 7],
  ...overrides,
});

const personal: ProjectNamespace = { id: 2, kind: 'user', visibility: 'public', full_path: 'alice', full_name: 'Alice', traversal_ids: [2] };

const create = (overrides: Partial<CreateProjectCommand> = {}): CreateProjectCommand => ({
  type: 'CreateProject',
  creatorId: 5,
  namespace: group(),
  settings: settings(),
  initializeWithReadme: false,
  defaultBranch: 'master',
  taken: { name: false, path: false },
  personalLimit: null,
  ...overrides,
});

/** Project 11's stream. */
const given = (...history: ProjectEvent[]) => deciderSpec(projectDecider).on(11).given(...history);

const created = (command: CreateProjectCommand = create()) => projectDecider.decide(command, projectDecider.initialState(11)) as ProjectEvent[];

describe('CreateProject', () => {
  it('creates the project with the namespace paths and an empty repository', () => {
    given().when(create()).then([
      {
        type: 'ProjectCreated',
        data: {
          id: 11,
          namespace_id: 7,
          creator_id: 5,
          namespace_kind: 'group',
          traversal_ids: [3, 7],
          path_with_namespace: 'acme/web/site',
          name_with_namespace: 'Acme / Web / Site',
          readme: false,
          default_branch: null,
          ...settings(),
        },
      },
    ]);
  });

  it('puts a README on the default branch when asked', () => {
    const [event] = created(create({ initializeWithReadme: true, defaultBranch: 'main' }));
    expect(event?.type === 'ProjectCreated' && [event.data.readme, event.data.default_branch]).toEqual([true, 'main']);
  });

  it('reports every validation error at once, keyed in the order Rails adds them', () => {
    given()
      .when(create({ settings: settings({ name: '-bad', path: '-bad', description: 'x'.repeat(2001) }), taken: { name: true, path: true } }))
      .then(
        rejected('invalid', { fields: {
          description: ['is too long (maximum is 2000 characters)'],
          name: [NAME_FORMAT_MESSAGE, 'has already been taken'],
          path: [PATH_FORMAT_MESSAGE, 'has already been taken'],
        } }),
      );
  });

  it('answers a taken name and path as GitLab validation errors', () => {
    given().when(create({ taken: { name: true, path: true } })).then(rejected('invalid', { fields: { name: ['has already been taken'], path: ['has already been taken'] } }));
  });

  it('refuses blank names and paths, reserved paths and .git endings', () => {
    given().when(create({ settings: settings({ name: '', path: '' }) })).then(rejected('invalid', { fields: {
      name: ["can't be blank", NAME_FORMAT_MESSAGE],
      path: ["can't be blank", PATH_FORMAT_MESSAGE],
    } }));
    given().when(create({ settings: settings({ path: 'tree' }) })).then(rejected('invalid', { fields: { path: ['tree is a reserved name'] } }));
    given().when(create({ settings: settings({ path: 'site.git' }) })).then(rejected('invalid', { fields: { path: [PATH_FORMAT_MESSAGE] } }));
  });

  it('may not be more visible than its group', () => {
    given().when(create({ settings: settings({ visibility: 'public' }) })).then(rejected('invalid', { fields: {
      visibility_level: ['public is not allowed in a internal group.'],
    } }));
  });

  it('has no visibility limit in a personal namespace', () => {
    expect(created(create({ namespace: personal, settings: settings({ visibility: 'public' }) }))).toHaveLength(1);
  });

  it('stops at the personal project limit', () => {
    given().when(create({ namespace: personal, personalLimit: { limit: 2, count: 2 } })).then(rejected('invalid', { fields: {
      limit_reached: ['Your project limit is 2 projects! Please contact your administrator to increase it'],
    } }));
    given().when(create({ namespace: personal, personalLimit: { limit: 0, count: 0 } })).then(rejected('invalid', { fields: {
      limit_reached: ['Personal project creation is not allowed. Please contact your administrator with questions'],
    } }));
  });

  it('claims the name (exactly) and the path (case-folded) in the namespace', () => {
    const [event] = created(create({ settings: settings({ name: 'Site', path: 'SiTe' }) }));
    expect(projectClaims(event!, projectDecider.initialState(11)).acquire.map(({ kind, key }) => ({ kind, key }))).toEqual([
      { kind: 'project_name', key: '7/Site' },
      { kind: 'project_path', key: '7/site' },
    ]);
  });
});

describe('parameterize (a path from a name)', () => {
  it.each([
    ['My Project', 'my-project'],
    ['  Über  Straße!! ', 'uber-strasse'],
    ['a_b-c.d', 'a_b-c-d'],
    ['---', ''],
  ])('%j → %j', (name, path) => expect(parameterize(name)).toBe(path));
});

describe('UpdateProject', () => {
  const history = created();

  it('appends only the changed settings', () => {
    given(...history)
      .when({ type: 'UpdateProject', changes: { description: 'New', merge_method: 'merge' }, namespace: group(), taken: { name: false, path: false }, branches: [] })
      .then([
        {
          type: 'ProjectUpdated',
          data: {
            id: 11,
            changes: { description: 'New' },
            path_with_namespace: 'acme/web/site',
            name_with_namespace: 'Acme / Web / Site',
            previous: { visibility: 'private', path_with_namespace: 'acme/web/site', name_with_namespace: 'Acme / Web / Site' },
          },
        },
      ]);
  });

  it('records the full path and name after a rename and the audited values before (schema version 2)', () => {
    given(...history)
      .when({ type: 'UpdateProject', changes: { name: 'Shop', path: 'shop', visibility: 'internal' }, namespace: group(), taken: { name: false, path: false }, branches: [] })
      .then([
        {
          type: 'ProjectUpdated',
          data: {
            id: 11,
            changes: { name: 'Shop', path: 'shop', visibility: 'internal' },
            path_with_namespace: 'acme/web/shop',
            name_with_namespace: 'Acme / Web / Shop',
            previous: { visibility: 'private', path_with_namespace: 'acme/web/site', name_with_namespace: 'Acme / Web / Site' },
          },
        },
      ]);
  });

  it('appends nothing when nothing changes', () => {
    given(...history).when({ type: 'UpdateProject', changes: { name: 'Site' }, namespace: group(), taken: { name: false, path: false }, branches: [] }).then([]);
  });

  it('checks a new visibility against the group, and a rename against the claims', () => {
    given(...history)
      .when({ type: 'UpdateProject', changes: { visibility: 'public' }, namespace: group(), taken: { name: false, path: false }, branches: [] })
      .then(rejected('invalid', { fields: { visibility_level: ['public is not allowed in a internal group.'] } }));
    given(...history)
      .when({ type: 'UpdateProject', changes: { name: 'Taken' }, namespace: group(), taken: { name: true, path: false }, branches: [] })
      .then(rejected('invalid', { fields: { name: ['has already been taken'] } }));
  });

  it('only moves the default branch to a branch that exists', () => {
    given(...history)
      .when({ type: 'UpdateProject', changes: { default_branch: 'develop' }, namespace: group(), taken: { name: false, path: false }, branches: [] })
      .then(rejected('bad_request', { text: 'Could not set the default branch' }));
    given(...history)
      .when({ type: 'UpdateProject', changes: { default_branch: 'develop' }, namespace: group(), taken: { name: false, path: false }, branches: ['master', 'develop'] })
      .then([expect.objectContaining({ type: 'ProjectUpdated', data: expect.objectContaining({ changes: { default_branch: 'develop' } }) })]);
  });

  it('moves the claims on a rename', () => {
    const { state } = given(...history);
    const claims = projectClaims({ type: 'ProjectUpdated', data: { id: 11, changes: { name: 'Shop', path: 'shop' }, path_with_namespace: null, name_with_namespace: null, previous: null } }, state);
    expect(claims.acquire.map((c) => c.key)).toEqual(['7/Shop', '7/shop']);
    expect(claims.release.map((c) => c.key)).toEqual(['7/Site', '7/site']);
  });
});

describe('archive, stars, deletion', () => {
  const history = created();

  it('archives and unarchives once', () => {
    given(...history).when({ type: 'ArchiveProject' }).then([{ type: 'ProjectArchived', data: { id: 11 } }]);
    given(...history, { type: 'ProjectArchived', data: { id: 11 } }).when({ type: 'ArchiveProject' }).then([]);
    given(...history).when({ type: 'UnarchiveProject' }).then([]);
  });

  it('stars once per user, and unstars only a star', () => {
    given(...history).when({ type: 'StarProject', userId: 5 }).then([{ type: 'ProjectStarred', data: { id: 11, user_id: 5 } }]);
    const starred = [...history, { type: 'ProjectStarred', data: { id: 11, user_id: 5 } } as const];
    given(...starred).when({ type: 'StarProject', userId: 5 }).then([]);
    given(...starred).when({ type: 'UnstarProject', userId: 5 }).then([{ type: 'ProjectUnstarred', data: { id: 11, user_id: 5 } }]);
    given(...history).when({ type: 'UnstarProject', userId: 5 }).then([]);
  });

  it('schedules the deletion, then hides the project from every other command', () => {
    given(...history).when({ type: 'ScheduleProjectDeletion' }).then([{ type: 'ProjectDeletionScheduled', data: { id: 11, path_with_namespace: 'acme/web/site' } }]);
    const scheduled = [...history, { type: 'ProjectDeletionScheduled', data: { id: 11, path_with_namespace: 'acme/web/site' } } as const];
    given(...scheduled).when({ type: 'StarProject', userId: 5 }).then(rejected('not_found', { subject: 'Project' }));
    given(...scheduled).when({ type: 'DeleteProject' }).then([{ type: 'ProjectDeleted', data: { id: 11, namespace_id: 7, path_with_namespace: 'acme/web/site' } }]);
  });

  it('deletes idempotently and gives the claims back', () => {
    const deleted = [...history, { type: 'ProjectDeleted', data: { id: 11, namespace_id: 7, path_with_namespace: 'acme/web/site' } } as const];
    given(...deleted).when({ type: 'DeleteProject' }).then([]);
    given(...deleted).when(create()).then(rejected('conflict'));
    const { state } = given(...history);
    expect(projectClaims(deleted.at(-1)!, state).release.map((c) => c.key)).toEqual(['7/Site', '7/site']);
  });
});

describe('sharing with a group', () => {
  const share = { type: 'ShareProjectWithGroup', linkId: 4, groupId: 9, groupAccess: 20, expiresAt: null, namespaceTraversalIds: [3, 7], pathWithNamespace: 'acme/web/site' } as const;
  const linked: ProjectEvent = {
    type: 'ProjectGroupLinkCreated',
    data: { id: 11, link_id: 4, group_id: 9, group_access: 20, expires_at: null, path_with_namespace: 'acme/web/site' },
  };

  it('links a group once; the project’s group and its ancestors never (ProjectGroupLink validations, one sentence)', () => {
    given(...created()).when(share).then([linked]);
    given(...created(), linked).when({ ...share, linkId: 5 }).then(rejected('conflict', { text: 'Group already shared with this group' }));
    given(...created()).when({ ...share, groupId: 3 }).then(rejected('conflict', { text: 'Project cannot be shared with the group it is in or one of its ancestors.' }));
  });

  it('removes an existing link only', () => {
    const unshare = { type: 'UnshareProjectWithGroup', groupId: 9, pathWithNamespace: 'acme/web/site' } as const;
    given(...created(), linked).when(unshare).then([{ type: 'ProjectGroupLinkDeleted', data: { id: 11, link_id: 4, group_id: 9, path_with_namespace: 'acme/web/site' } }]);
    given(...created()).when(unshare).then(rejected('not_found', { subject: 'Group Link' }));
  });
});
