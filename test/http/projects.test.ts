import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectsProjector } from '../../src/projections/projects/projector.js';
import { itOnPostgres } from '../support/database.js';
import { addMember, eventually } from '../support/fixtures.js';
import { expectReplayEquivalence } from '../support/replay.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer();
});
afterAll(() => api.close());

let counter = 0;
const unique = (prefix: string) => `${prefix}${++counter}`;

async function user(attributes: Record<string, unknown> = {}) {
  return api.createUser({ username: unique('pu'), ...attributes });
}

async function group(body: Record<string, unknown> = {}, token = api.rootToken) {
  const path = unique('pg');
  const res = await api.post('/groups', { name: path, path, visibility: 'private', ...body }, { token });
  if (res.status !== 201) throw new Error(`POST /groups ${res.status} ${res.text}`);
  return res.body as { id: number; full_path: string; name: string };
}

async function project(body: Record<string, unknown> = {}, token = api.rootToken) {
  const res = await api.post('/projects', { path: unique('pp'), ...body }, { token });
  if (res.status !== 201) throw new Error(`POST /projects ${res.status} ${res.text}`);
  return res.body;
}

// GitLab 12.10 Entities::Project, field by field in its order (EE fields last, plan ultimate).
const PROJECT_FIELDS = [
  'id', 'description', 'name', 'name_with_namespace', 'path', 'path_with_namespace', 'created_at', 'default_branch', 'tag_list',
  'ssh_url_to_repo', 'http_url_to_repo', 'web_url', 'readme_url', 'avatar_url', 'star_count', 'forks_count', 'last_activity_at', 'namespace',
  '_links', 'empty_repo', 'archived', 'visibility', 'owner', 'resolve_outdated_diff_discussions', 'container_registry_enabled', 'issues_enabled',
  'merge_requests_enabled', 'wiki_enabled', 'jobs_enabled', 'snippets_enabled', 'can_create_merge_request_in', 'issues_access_level',
  'repository_access_level', 'merge_requests_access_level', 'wiki_access_level', 'builds_access_level', 'snippets_access_level',
  'pages_access_level', 'emails_disabled', 'shared_runners_enabled', 'lfs_enabled', 'creator_id', 'import_status', 'import_error',
  'open_issues_count', 'runners_token', 'ci_default_git_depth', 'public_jobs', 'build_git_strategy', 'build_timeout',
  'auto_cancel_pending_pipelines', 'build_coverage_regex', 'ci_config_path', 'shared_with_groups', 'only_allow_merge_if_pipeline_succeeds',
  'request_access_enabled', 'only_allow_merge_if_all_discussions_are_resolved', 'remove_source_branch_after_merge',
  'printing_merge_request_link_enabled', 'merge_method', 'suggestion_commit_message', 'auto_devops_enabled', 'auto_devops_deploy_strategy',
  'autoclose_referenced_issues', 'approvals_before_merge', 'mirror', 'external_authorization_classification_label', 'packages_enabled',
  'service_desk_enabled', 'service_desk_address', 'marked_for_deletion_at',
];
const SIMPLE_FIELDS = [
  'id', 'description', 'name', 'name_with_namespace', 'path', 'path_with_namespace', 'created_at', 'default_branch', 'tag_list',
  'ssh_url_to_repo', 'http_url_to_repo', 'web_url', 'readme_url', 'avatar_url', 'star_count', 'forks_count', 'last_activity_at', 'namespace',
];

describe('POST /projects', () => {
  it("creates a private project in the caller's namespace with GitLab 12's record and defaults", async () => {
    const { user: alice, token } = await user({ name: 'Alice Liddell' });
    const res = await api.post('/projects', { name: 'Looking Glass' }, { token });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json');
    const p = res.body;
    expect(Object.keys(p)).toEqual(PROJECT_FIELDS);
    const host = new URL(api.url).hostname;
    expect(p).toMatchObject({
      description: null,
      name: 'Looking Glass',
      name_with_namespace: 'Alice Liddell / Looking Glass',
      path: 'looking-glass',
      path_with_namespace: `${alice.username}/looking-glass`,
      default_branch: null,
      tag_list: [],
      ssh_url_to_repo: `git@${host}:${alice.username}/looking-glass.git`,
      http_url_to_repo: `${api.url}/${alice.username}/looking-glass.git`,
      web_url: `${api.url}/${alice.username}/looking-glass`,
      readme_url: null,
      star_count: 0,
      forks_count: 0,
      namespace: {
        name: 'Alice Liddell',
        path: alice.username,
        kind: 'user',
        full_path: alice.username,
        parent_id: null,
        avatar_url: alice.avatar_url,
        web_url: `${api.url}/${alice.username}`,
      },
      _links: {
        self: `${api.apiUrl}/projects/${p.id}`,
        issues: `${api.apiUrl}/projects/${p.id}/issues`,
        merge_requests: `${api.apiUrl}/projects/${p.id}/merge_requests`,
        repo_branches: `${api.apiUrl}/projects/${p.id}/repository/branches`,
        labels: `${api.apiUrl}/projects/${p.id}/labels`,
        events: `${api.apiUrl}/projects/${p.id}/events`,
        members: `${api.apiUrl}/projects/${p.id}/members`,
      },
      empty_repo: true,
      archived: false,
      visibility: 'private',
      owner: { id: alice.id, username: alice.username, name: 'Alice Liddell', state: 'active' },
      issues_enabled: true,
      issues_access_level: 'enabled',
      pages_access_level: 'private',
      creator_id: alice.id,
      import_status: 'none',
      import_error: null,
      open_issues_count: 0,
      runners_token: expect.stringMatching(/^[\w-]{20}$/),
      ci_default_git_depth: 50,
      public_jobs: true,
      build_git_strategy: 'fetch',
      shared_with_groups: [],
      request_access_enabled: true,
      merge_method: 'merge',
      auto_devops_enabled: true,
    });
    expect(p.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(p.last_activity_at).toBe(p.created_at);
    expect(p.namespace.id).toBe((await api.handle.db.selectFrom('namespaces').select('id').where('owner_id', '=', alice.id).executeTakeFirstOrThrow()).id);

    // The creation and the owner's maintainer membership are events of one request.
    const [created] = await api.events(`project-${p.id}`);
    expect(created).toMatchObject({ type: 'ProjectCreated', data: { id: p.id, name: 'Looking Glass', path: 'looking-glass' }, metadata: { actor_id: alice.id } });
    const members = await api.events(`members-project-${p.id}`);
    expect(members).toMatchObject([{ type: 'MemberAdded', data: { user_id: alice.id, access_level: 40 }, metadata: { request_id: created!.metadata.request_id } }]);
  });

  it('derives the name from the path, initializes a README and takes form bodies with every setting', async () => {
    const { token } = await user();
    const res = await api.request('POST', '/projects', {
      token,
      form: {
        path: 'Deep.Thought_42',
        description: 'answers',
        initialize_with_readme: 'true',
        visibility: 'internal',
        issues_enabled: 'false',
        wiki_access_level: 'private',
        jobs_enabled: 'no',
        'tag_list[]': 'zeta',
        merge_method: 'ff',
        public_jobs: 'false',
        request_access_enabled: 'false',
        container_registry_enabled: 'false',
        only_allow_merge_if_pipeline_succeeds: '1',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Deep.Thought_42',
      path: 'Deep.Thought_42',
      description: 'answers',
      visibility: 'internal',
      default_branch: 'master',
      empty_repo: false,
      readme_url: `${res.body.web_url}/blob/master/README.md`,
      tag_list: ['zeta'],
      issues_enabled: false,
      issues_access_level: 'disabled',
      wiki_access_level: 'private',
      wiki_enabled: true,
      jobs_enabled: false,
      builds_access_level: 'disabled',
      merge_method: 'ff',
      public_jobs: false,
      request_access_enabled: false,
      container_registry_enabled: false,
      only_allow_merge_if_pipeline_succeeds: true,
    });
    // GitLab: no issues link and no open issue count when the feature is off.
    expect(res.body._links.issues).toBeUndefined();
    expect('open_issues_count' in res.body).toBe(false);
  });

  it('answers Grape parameter errors', async () => {
    const { token } = await user();
    expect(await api.post('/projects', { description: 'x' }, { token })).toMatchObject({
      status: 400,
      body: { error: 'name, path are missing, at least one parameter must be provided' },
    });
    expect(await api.post('/projects', { name: 'x', visibility: 'secret', namespace_id: 'abc' }, { token })).toMatchObject({
      status: 400,
      body: { error: 'visibility does not have a valid value, namespace_id is invalid' },
    });
    expect(await api.post('/projects', { name: 'x' }, { token: null })).toMatchObject({ status: 401, body: { message: '401 Unauthorized' } });
  });

  it("answers GitLab's validation errors with the limit_reached key the endpoint looks at", async () => {
    const { token } = await user();
    await api.post('/projects', { name: 'Twin', path: 'twin' }, { token });
    expect(await api.post('/projects', { name: 'Twin' }, { token })).toMatchObject({
      status: 400,
      body: { message: { name: ['has already been taken'], path: ['has already been taken'], limit_reached: [] } },
    });
    // Paths are unique regardless of case; names exactly.
    const res = await api.post('/projects', { name: 'twin', path: 'TWIN' }, { token });
    expect(res.status).toBe(400);
    expect(res.text).toBe('{"message":{"path":["has already been taken"],"limit_reached":[]}}');
    expect(await api.post('/projects', { name: '-dash', path: 'blob' }, { token })).toMatchObject({
      status: 400,
      body: {
        message: {
          name: ["can contain only letters, digits, emojis, '_', '.', dash, space. It must start with letter, digit, emoji or '_'."],
          path: ['blob is a reserved name'],
          limit_reached: [],
        },
      },
    });
  });

  it('refuses namespaces the caller may not create projects in', async () => {
    const { token } = await user();
    const other = await user();
    const namespaceOfOther = (await api.get('/user', { token: other.token })).body.id;
    const otherNamespace = (await api.handle.db.selectFrom('namespaces').select('id').where('owner_id', '=', namespaceOfOther).executeTakeFirstOrThrow()).id;
    const body = { message: { namespace: ['is not valid'], limit_reached: [] } };
    expect(await api.post('/projects', { name: 'x', namespace_id: otherNamespace }, { token })).toMatchObject({ status: 400, body });
    expect(await api.post('/projects', { name: 'x', namespace_id: 999999 }, { token })).toMatchObject({ status: 400, body });
    const g = await group();
    expect(await api.post('/projects', { name: 'x', namespace_id: g.id }, { token })).toMatchObject({ status: 400, body });
  });

  it("follows the group's project_creation_level and leaves the members to the group", async () => {
    const g = await group({ visibility: 'internal' });
    const reporter = await user();
    const developer = await user();
    await addMember(api, 'groups', g.id, reporter.user.id, 20);
    await addMember(api, 'groups', g.id, developer.user.id, 30);
    expect((await api.post('/projects', { name: 'r', namespace_id: g.id }, { token: reporter.token })).status).toBe(400);
    const res = await api.post('/projects', { name: 'Dev Tools', namespace_id: g.id }, { token: developer.token });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ path_with_namespace: `${g.full_path}/dev-tools`, name_with_namespace: `${g.name} / Dev Tools`, creator_id: developer.user.id });
    expect(res.body.namespace).toEqual({
      id: g.id,
      name: g.name,
      path: g.full_path,
      kind: 'group',
      full_path: g.full_path,
      parent_id: null,
      avatar_url: null,
      web_url: `${api.url}/groups/${g.full_path}`,
    });
    // A developer does not administer the project: no runners token; no owner in a group.
    expect('runners_token' in res.body).toBe(false);
    expect('owner' in res.body).toBe(false);
    expect(await api.events(`members-project-${res.body.id}`)).toEqual([]);
    // GitLab: a project may not be more visible than its group.
    expect(await api.post('/projects', { name: 'pub', namespace_id: g.id, visibility: 'public' }, { token: developer.token })).toMatchObject({
      status: 400,
      body: { message: { visibility_level: ['public is not allowed in a internal group.'], limit_reached: [] } },
    });
    // GitLab: `noone` refuses everybody, administrators (root here) included.
    const locked = await group({ project_creation_level: 'noone' });
    expect(await api.post('/projects', { name: 'x', namespace_id: locked.id })).toMatchObject({
      status: 400,
      body: { message: { namespace: ['is not valid'], limit_reached: [] } },
    });
  });

  it('lets an administrator create in a user namespace, making its owner maintainer', async () => {
    const { user: bob, token } = await user();
    const namespaceId = (await api.handle.db.selectFrom('namespaces').select('id').where('owner_id', '=', bob.id).executeTakeFirstOrThrow()).id;
    const res = await api.post('/projects', { name: 'Gift', namespace_id: namespaceId });
    expect(res.status).toBe(201);
    expect(res.body.owner.id).toBe(bob.id);
    expect((await api.events(`members-project-${res.body.id}`))[0]).toMatchObject({ data: { user_id: bob.id, access_level: 40 } });
    expect((await api.get(`/projects/${res.body.id}`, { token })).body.permissions).toEqual({
      project_access: { access_level: 40, notification_level: 3 },
      group_access: null,
    });
  });

  it('stops at the personal project limit with 403', async () => {
    const limited = await user({ projects_limit: 1 });
    await project({}, limited.token);
    expect(await api.post('/projects', { name: 'second' }, { token: limited.token })).toMatchObject({
      status: 403,
      body: { message: ['Your project limit is 1 projects! Please contact your administrator to increase it'] },
    });
    // Naming the personal namespace, the namespace itself refuses (GitLab's NamespacePolicy).
    const own = (await api.handle.db.selectFrom('namespaces').select('id').where('owner_id', '=', limited.user.id).executeTakeFirstOrThrow()).id;
    expect(await api.post('/projects', { name: 'third', namespace_id: own }, { token: limited.token })).toMatchObject({
      status: 400,
      body: { message: { namespace: ['is not valid'], limit_reached: [] } },
    });
    const none = await user({ projects_limit: 0 });
    expect(await api.post('/projects', { name: 'first' }, { token: none.token })).toMatchObject({
      status: 403,
      body: { message: ['Personal project creation is not allowed. Please contact your administrator with questions'] },
    });
  });

  it('counts the personal projects not pending deletion, kept as they come and go (namespace_project_counts)', async () => {
    const limited = await user({ projects_limit: 2 });
    const first = await project({}, limited.token);
    await project({}, limited.token);
    expect((await api.post('/projects', { name: 'third' }, { token: limited.token })).status).toBe(403);
    // A project pending deletion no longer counts (and deleting it twice counts it out once).
    expect((await api.del(`/projects/${first.id}`, { token: limited.token })).status).toBe(202);
    expect((await api.del(`/projects/${first.id}`)).status).toBe(404);
    expect((await api.post('/projects', { name: 'third' }, { token: limited.token })).status).toBe(201);
    expect((await api.post('/projects', { name: 'fourth' }, { token: limited.token })).status).toBe(403);
    // A group removed takes its projects out of the count at once; so does a removed user.
    const doomed = await group();
    const removed = [(await project({ namespace_id: doomed.id })).id, (await project({ namespace_id: doomed.id })).id];
    expect((await api.del(`/groups/${doomed.id}`)).status).toBe(202);
    const gone = await user();
    removed.push((await project({}, gone.token)).id);
    expect((await api.del(`/users/${gone.user.id}`)).status).toBe(204);
    // The removals' reactors delete the projects a moment later: they count them out no second
    // time (and leave nothing to append behind the next test's back).
    await eventually(async () => {
      const projectsLeft = await api.handle.db.selectFrom('projects').select('id').where('id', 'in', removed).execute();
      const groupLeft = await api.handle.db.selectFrom('namespaces').select('id').where('id', '=', doomed.id).executeTakeFirst();
      return projectsLeft.length === 0 && groupLeft === undefined ? true : undefined;
    });
    const counted = await api.handle.db.selectFrom('namespace_project_counts').select(['namespace_id', 'projects']).where('projects', '>', 0).orderBy('namespace_id').execute();
    const actual = (
      await sql<{ namespace_id: number; projects: number }>`select namespace_id, count(*)::integer as projects from projects where not pending_delete group by namespace_id order by namespace_id`.execute(api.handle.db)
    ).rows;
    expect(counted).toEqual(actual);
    expect(counted.find((c) => c.namespace_id === doomed.id)).toBeUndefined();
    // A namespace removed leaves no count behind.
    const goneNamespace = (await api.events(`user-${gone.user.id}`)).find((e) => e.type === 'UserCreated')!.data.namespace_id;
    expect(await api.handle.db.selectFrom('namespace_project_counts').select('namespace_id').where('namespace_id', 'in', [doomed.id, goneNamespace]).execute()).toEqual([]);
  });
});

describe('concurrent creations', () => {
  const lastPosition = async () => Number((await sql<{ p: string | null }>`select max(global_position) as p from events`.execute(api.handle.db)).rows[0]!.p ?? 0);
  /** The events appended after a position, and the positions skipped among them (by a rolled-back append). */
  async function positionsSince(position: number) {
    const { rows } = await sql<{ n: string; last: string | null }>`select count(*) as n, max(global_position) as last from events where global_position > ${position}`.execute(api.handle.db);
    const count = Number(rows[0]!.n);
    return { count, holes: Number(rows[0]!.last ?? position) - position - count };
  }

  // Each creation takes its namespace's row `for share`, from the command to the projector:
  // none waits for another (before, each upgraded to `for update` and they deadlocked). A
  // transaction rolled back and retried would leave a hole in the log's positions.
  itOnPostgres('eight projects in one group at once: all 201, no transaction retried', async () => {
    const namespace = await group();
    const before = await lastPosition();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => api.post('/projects', { path: `crowd-${i}`, namespace_id: namespace.id })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(await positionsSince(before)).toEqual({ count: 8, holes: 0 });
    expect(results.map((r) => r.body.path_with_namespace).sort()).toEqual(Array.from({ length: 8 }, (_, i) => `${namespace.full_path}/crowd-${i}`));
  });

  itOnPostgres('eight projects in one personal namespace at once: all 201, no transaction retried', async () => {
    const owner = await user();
    const before = await lastPosition();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => api.post('/projects', { path: `mine-${i}` }, { token: owner.token })));
    expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(await positionsSince(before)).toEqual({ count: 16, holes: 0 }); // ProjectCreated and the owner's MemberAdded each
  });
});

describe('GET /projects/:id', () => {
  it('finds a project by id or URL-encoded path, with a .json suffix too', async () => {
    const { token } = await user();
    const p = await project({ name: 'Findable' }, token);
    for (const id of [String(p.id), encodeURIComponent(p.path_with_namespace), encodeURIComponent(p.path_with_namespace.toUpperCase()), `${p.id}.json`]) {
      const res = await api.get(`/projects/${id}`, { token });
      expect(res.status, id).toBe(200);
      expect(res.body.id).toBe(p.id);
    }
    expect(Object.keys((await api.get(`/projects/${p.id}`, { token })).body)).toEqual([
      ...PROJECT_FIELDS.slice(0, PROJECT_FIELDS.indexOf('approvals_before_merge')),
      'permissions',
      ...PROJECT_FIELDS.slice(PROJECT_FIELDS.indexOf('approvals_before_merge')),
    ]);
  });

  it('answers 404 for what is not there or not visible', async () => {
    const p = await project({ visibility: 'private' });
    const outsider = await user();
    for (const [id, token] of [[String(p.id), outsider.token], [String(p.id), null], ['999999', api.rootToken], ['99999999999', api.rootToken], ['no%2Fsuch', api.rootToken]] as const) {
      const res = await api.get(`/projects/${id}`, { token });
      expect(res.status, id).toBe(404);
      expect(res.body).toEqual({ message: '404 Project Not Found' });
    }
  });

  it('shows anonymous callers the simple view of a public project', async () => {
    const p = await project({ visibility: 'public', initialize_with_readme: true });
    const res = await api.get(`/projects/${p.id}`, { token: null });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(SIMPLE_FIELDS);
    expect(res.body.default_branch).toBe('master');
  });

  it("shows the caller's permissions: the project membership and the highest group membership above it", async () => {
    const top = await group();
    const sub = (await api.post('/groups', { name: 'sub', path: 'sub', parent_id: top.id })).body;
    const p = await project({ namespace_id: sub.id });
    const dev = await user();
    await addMember(api, 'groups', top.id, dev.user.id, 30);
    await addMember(api, 'projects', p.id, dev.user.id, 40);
    const res = await api.get(`/projects/${p.id}`, { token: dev.token, query: { statistics: true, license: true } });
    expect(res.body.permissions).toEqual({ project_access: { access_level: 40, notification_level: 3 }, group_access: { access_level: 30, notification_level: 3 } });
    expect(res.body).toMatchObject({ license_url: null, license: null, runners_token: expect.any(String) });
    expect(res.body.statistics).toEqual({ commit_count: 0, storage_size: 0, repository_size: 0, wiki_size: 0, lfs_objects_size: 0, job_artifacts_size: 0 });
    // Root created the top group: its ownership up there is the highest group membership.
    expect((await api.get(`/projects/${p.id}`)).body.permissions).toEqual({ project_access: null, group_access: { access_level: 50, notification_level: 3 } });
    // An admin without memberships sees the project all the same.
    const admin = await user({ admin: true });
    expect((await api.get(`/projects/${p.id}`, { token: admin.token })).body.permissions).toEqual({ project_access: null, group_access: null });
  });

  it('hides the default branch and ci_config_path from a guest of a private project', async () => {
    const p = await project({ initialize_with_readme: true });
    const guest = await user();
    await addMember(api, 'projects', p.id, guest.user.id, 10);
    const res = await api.get(`/projects/${p.id}`, { token: guest.token });
    expect(res.status).toBe(200);
    expect('default_branch' in res.body).toBe(false);
    expect('ci_config_path' in res.body).toBe(false);
    expect('runners_token' in res.body).toBe(false);
  });

  it('shows a private merge requests feature to reporters and up (ProjectFeature::PRIVATE_FEATURES_MIN_ACCESS_LEVEL), a private issues feature to guests', async () => {
    const g = await group({ visibility: 'public' });
    const p = await project({ namespace_id: g.id, visibility: 'public', merge_requests_access_level: 'private', issues_access_level: 'private' });
    const [guest, reporter, outsider] = [await user(), await user(), await user()];
    await addMember(api, 'projects', p.id, guest.user.id, 10);
    await addMember(api, 'projects', p.id, reporter.user.id, 20);
    const seen = async (token: string) => {
      const { body } = await api.get(`/projects/${p.id}`, { token });
      return { issues: body.issues_enabled, mergeRequests: body.merge_requests_enabled, mrLink: 'merge_requests' in body._links, createIn: body.can_create_merge_request_in };
    };
    expect(await seen(outsider.token)).toEqual({ issues: false, mergeRequests: false, mrLink: false, createIn: false });
    expect(await seen(guest.token)).toEqual({ issues: true, mergeRequests: false, mrLink: false, createIn: false });
    expect(await seen(reporter.token)).toEqual({ issues: true, mergeRequests: true, mrLink: true, createIn: true });
    // GitLab 12's list filters: with_issues_enabled asks the same rule (with_feature_available_for_user);
    // with_merge_requests_enabled only that the feature is not disabled.
    const listed = async (token: string, filter: string) => (await api.get('/projects', { token, query: { [filter]: true, search: p.path } })).body.map((r: any) => r.id);
    expect(await listed(guest.token, 'with_issues_enabled')).toEqual([p.id]);
    expect(await listed(outsider.token, 'with_issues_enabled')).toEqual([]);
    expect(await listed(outsider.token, 'with_merge_requests_enabled')).toEqual([p.id]);
    const inGroup = async (token: string, filter: string) => (await api.get(`/groups/${g.id}/projects`, { token, query: { [filter]: true } })).body.map((r: any) => r.id);
    expect(await inGroup(outsider.token, 'with_issues_enabled')).toEqual([]);
    expect(await inGroup(outsider.token, 'with_merge_requests_enabled')).toEqual([p.id]);
  });
});

describe('PUT /projects/:id', () => {
  it('lets a maintainer change settings, appending only what changed', async () => {
    const p = await project({ initialize_with_readme: true });
    const maintainer = await user();
    await addMember(api, 'projects', p.id, maintainer.user.id, 40);
    const res = await api.put(`/projects/${p.id}`, { description: 'Edited', merge_requests_enabled: false, tag_list: ['b', 'a'], merge_method: 'merge', default_branch: 'master' }, { token: maintainer.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ description: 'Edited', merge_requests_enabled: false, merge_requests_access_level: 'disabled', tag_list: ['a', 'b'] });
    expect(res.body._links.merge_requests).toBeUndefined();
    expect('permissions' in res.body).toBe(false);
    expect((await api.events(`project-${p.id}`)).at(-1)).toMatchObject({
      type: 'ProjectUpdated',
      data: { id: p.id, changes: { description: 'Edited', merge_requests_access_level: 'disabled', tag_list: ['a', 'b'] } },
      metadata: { actor_id: maintainer.user.id },
    });
  });

  it('keeps renames and visibility to owners; a rename moves the path', async () => {
    const g = await group({ visibility: 'public' });
    const p = await project({ namespace_id: g.id, name: 'Old Name', path: 'old-path' });
    const maintainer = await user();
    await addMember(api, 'projects', p.id, maintainer.user.id, 40);
    expect(await api.put(`/projects/${p.id}`, { name: 'New' }, { token: maintainer.token })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect((await api.put(`/projects/${p.id}`, { visibility: 'public' }, { token: maintainer.token })).status).toBe(403);
    expect((await api.put(`/projects/${p.id}`, { path: 'moved' }, { token: maintainer.token })).status).toBe(200);

    const owner = await user();
    await addMember(api, 'groups', g.id, owner.user.id, 50);
    const res = await api.put(`/projects/${p.id}`, { name: 'New Name', visibility: 'internal' }, { token: owner.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'New Name', name_with_namespace: `${g.name} / New Name`, path_with_namespace: `${g.full_path}/moved`, visibility: 'internal' });
    expect((await api.get(`/projects/${encodeURIComponent(`${g.full_path}/old-path`)}`)).status).toBe(404);
    expect((await api.get(`/projects/${encodeURIComponent(`${g.full_path}/moved`)}`)).body.id).toBe(p.id);
    // The old path is free again.
    expect((await api.post('/projects', { name: 'Old Name', path: 'old-path', namespace_id: g.id })).status).toBe(201);
  });

  it('answers validation errors without limit_reached', async () => {
    const g = await group({ visibility: 'private' });
    await project({ namespace_id: g.id, name: 'Taken', path: 'taken' });
    const p = await project({ namespace_id: g.id });
    expect(await api.put(`/projects/${p.id}`, { name: 'Taken' })).toMatchObject({ status: 400, body: { message: { name: ['has already been taken'] } } });
    expect(await api.put(`/projects/${p.id}`, { visibility: 'public' })).toMatchObject({
      status: 400,
      body: { message: { visibility_level: ['public is not allowed in a private group.'] } },
    });
    expect(await api.put(`/projects/${p.id}`, { default_branch: 'develop' })).toMatchObject({ status: 400, body: { message: 'Could not set the default branch' } });
    const missing = await api.put(`/projects/${p.id}`, { unknown: 1 });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/^auto_devops_enabled, auto_devops_deploy_strategy, .*, snippets_enabled are missing, at least one parameter must be provided$/);
  });

  it('answers 401, 404 and 403 by who asks', async () => {
    const p = await project({ visibility: 'internal' });
    const developer = await user();
    await addMember(api, 'projects', p.id, developer.user.id, 30);
    const outsider = await user({ external: true });
    expect((await api.put(`/projects/${p.id}`, { description: 'x' }, { token: null })).status).toBe(401);
    expect(await api.put(`/projects/${p.id}`, { description: 'x' }, { token: outsider.token })).toMatchObject({ status: 404, body: { message: '404 Project Not Found' } });
    expect(await api.put(`/projects/${p.id}`, { description: 'x' }, { token: developer.token })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
  });
});

describe('POST /projects/:id/archive and /unarchive', () => {
  it('archives for owners, idempotently, and answers 201 with the project', async () => {
    const { token } = await user();
    const p = await project({}, token);
    const archived = await api.post(`/projects/${p.id}/archive`, undefined, { token });
    expect(archived.status).toBe(201);
    expect(archived.body).toMatchObject({ id: p.id, archived: true });
    expect('runners_token' in archived.body).toBe(false);
    expect((await api.post(`/projects/${p.id}/archive`, undefined, { token })).body.archived).toBe(true);
    expect((await api.events(`project-${p.id}`)).map((e) => e.type)).toEqual(['ProjectCreated', 'ProjectArchived']);
    const unarchived = await api.post(`/projects/${p.id}/unarchive`, undefined, { token });
    expect(unarchived).toMatchObject({ status: 201, body: { archived: false } });
    expect((await api.events(`project-${p.id}`)).at(-1)!.type).toBe('ProjectUnarchived');
  });

  it('is an owner right: maintainers get 403', async () => {
    const g = await group();
    const p = await project({ namespace_id: g.id });
    const maintainer = await user();
    await addMember(api, 'groups', g.id, maintainer.user.id, 40);
    expect(await api.post(`/projects/${p.id}/archive`, undefined, { token: maintainer.token })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect((await api.post(`/projects/${p.id}/archive`, undefined, { token: null })).status).toBe(401);
  });
});

describe('POST /projects/:id/star and /unstar', () => {
  it('stars once (201, then 304) and unstars once', async () => {
    const p = await project({ visibility: 'public' });
    const fan = await user();
    const starred = await api.post(`/projects/${p.id}/star`, undefined, { token: fan.token });
    expect(starred).toMatchObject({ status: 201, body: { id: p.id, star_count: 1 } });
    const again = await api.post(`/projects/${p.id}/star`, undefined, { token: fan.token });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect((await api.get('/projects', { token: fan.token, query: { starred: true } })).body.map((x: any) => x.id)).toEqual([p.id]);
    expect(await api.post(`/projects/${p.id}/unstar`, undefined, { token: fan.token })).toMatchObject({ status: 201, body: { star_count: 0 } });
    expect((await api.post(`/projects/${p.id}/unstar`, undefined, { token: fan.token })).status).toBe(304);
    expect((await api.events(`project-${p.id}`)).slice(1)).toMatchObject([
      { type: 'ProjectStarred', data: { id: p.id, user_id: fan.user.id } },
      { type: 'ProjectUnstarred', data: { id: p.id, user_id: fan.user.id } },
    ]);
    expect((await api.post(`/projects/${p.id}/star`, undefined, { token: null })).status).toBe(401);
  });
});

describe('DELETE /projects/:id', () => {
  it('accepts the removal (202), hides the project at once and removes it asynchronously', async () => {
    const { token } = await user();
    const p = await project({ name: 'Doomed', path: 'doomed' }, token);
    const res = await api.del(`/projects/${p.id}`, { token });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ message: '202 Accepted' });
    expect((await api.get(`/projects/${p.id}`, { token })).status).toBe(404);
    expect((await api.get('/projects', { token, query: { owned: true } })).body).toEqual([]);
    const types = await eventually(async () => {
      const events = (await api.events(`project-${p.id}`)).map((e) => e.type);
      return events.includes('ProjectDeleted') ? events : undefined;
    });
    expect(types).toEqual(['ProjectCreated', 'ProjectDeletionScheduled', 'ProjectDeleted']);
    expect(await api.handle.db.selectFrom('projects').select('id').where('id', '=', p.id).executeTakeFirst()).toBeUndefined();
    // The name and path are free again.
    expect((await api.post('/projects', { name: 'Doomed', path: 'doomed' }, { token })).status).toBe(201);
  });

  it("is an owner right: the namespace's or a group ancestor's owner, or an admin", async () => {
    const top = await group();
    const sub = (await api.post('/groups', { name: 'child', path: 'child', parent_id: top.id })).body;
    const p = await project({ namespace_id: sub.id });
    const maintainer = await user();
    const owner = await user();
    await addMember(api, 'projects', p.id, maintainer.user.id, 40);
    await addMember(api, 'groups', top.id, owner.user.id, 50);
    expect(await api.del(`/projects/${p.id}`, { token: maintainer.token })).toMatchObject({ status: 403, body: { message: '403 Forbidden' } });
    expect((await api.del(`/projects/${p.id}`, { token: null })).status).toBe(401);
    expect(await api.del(`/projects/${p.id}`, { token: owner.token, headers: { 'If-Unmodified-Since': 'Mon, 01 Jan 2001 00:00:00 GMT' } })).toMatchObject({
      status: 412,
      body: { message: '412 Precondition Failed' },
    });
    expect((await api.del(`/projects/${p.id}`, { token: owner.token })).status).toBe(202);
    expect((await api.del(`/projects/${p.id}`, { token: owner.token })).status).toBe(404);
  });
});

describe('namespaces renamed or removed', () => {
  it("moves projects' paths and names with a group rename, through subgroups", async () => {
    const top = await group();
    const sub = (await api.post('/groups', { name: 'Sub', path: 'sub', parent_id: top.id })).body;
    const direct = await project({ namespace_id: top.id, name: 'Direct', path: 'direct' });
    const nested = await project({ namespace_id: sub.id, name: 'Nested', path: 'nested' });
    expect((await api.put(`/groups/${top.id}`, { name: 'Renamed Top', path: 'renamed-top' })).status).toBe(200);
    expect((await api.get(`/projects/${direct.id}`)).body).toMatchObject({ path_with_namespace: 'renamed-top/direct', name_with_namespace: 'Renamed Top / Direct' });
    const moved = (await api.get(`/projects/${nested.id}`)).body;
    expect(moved).toMatchObject({ path_with_namespace: 'renamed-top/sub/nested', name_with_namespace: 'Renamed Top / Sub / Nested', web_url: `${api.url}/renamed-top/sub/nested` });
    expect(moved.namespace).toMatchObject({ full_path: 'renamed-top/sub', parent_id: top.id });
  });

  it("moves a user's projects with a username change", async () => {
    const { user: carol, token } = await user();
    const p = await project({ name: 'Mine', path: 'mine' }, token);
    expect((await api.put(`/users/${carol.id}`, { username: 'carol-renamed', name: 'Carol R' })).status).toBe(200);
    expect((await api.get(`/projects/${p.id}`, { token })).body).toMatchObject({ path_with_namespace: 'carol-renamed/mine', name_with_namespace: 'Carol R / Mine' });
  });

  it("removes a deleted user's personal projects: hidden at once, then deleted", async () => {
    const { user: dave, token } = await user();
    const p = await project({ visibility: 'public' }, token);
    expect((await api.del(`/users/${dave.id}`)).status).toBe(204);
    expect((await api.get(`/projects/${p.id}`)).status).toBe(404);
    await eventually(async () => ((await api.events(`project-${p.id}`)).some((e) => e.type === 'ProjectDeleted') ? true : undefined));
  });

  it("hides a group's projects as soon as the group's removal is scheduled", async () => {
    const g = await group();
    const p = await project({ namespace_id: g.id });
    expect((await api.del(`/groups/${g.id}`)).status).toBe(202);
    expect((await api.get(`/projects/${p.id}`)).status).toBe(404);
    // The group's removal then deletes the project through the projects area's command, then the
    // group: waited for too, so that the replay below does not run beside it.
    await eventually(async () => ((await api.events(`project-${p.id}`)).some((e) => e.type === 'ProjectDeleted') ? true : undefined));
    await eventually(async () => ((await api.events(`group-${g.id}`)).some((e) => e.type === 'GroupDeleted') ? true : undefined));
  });
});

describe('the projects projection', () => {
  it('is rebuilt from the log into exactly the rows the inline path wrote', async () => {
    // Every request above went through the inline projector; a rebuild replays the whole log.
    await expectReplayEquivalence(api.handle, [projectsProjector]);
  });
});
