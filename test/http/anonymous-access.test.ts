import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMergeRequestWorld } from '../support/merge-requests.js';
import type { TestServer } from '../support/server.js';

// An anonymous GET of a public resource, one per GitLab 12.10 API class forgelog implements:
// 200 where the class authenticates only non-GET requests (`before { authenticate_non_get! }`)
// or authorizes without authenticating (`authorize! :download_code`), 401 where it runs
// `authenticate!` / `authenticated_as_admin!`, 403 where it authorizes an ability anonymous
// callers lack. Epics are forgelog's own rule (README, "Epics and todos").

let api: TestServer;
let ids: { project: number; group: number; user: number; iid: number };

beforeAll(async () => {
  const world = await startMergeRequestWorld();
  api = world.api;
  const project = (await api.get(`/projects/${world.projects.public}`)).body;
  ids = { project: project.id, group: project.namespace.id, user: world.author.id, iid: await world.mergeRequest(world.projects.public) };
});
afterAll(() => api.close());

type Row = readonly [apiClass: string, path: () => string, status: 200 | 401 | 403];
const p = () => `/projects/${ids.project}`;
const g = () => `/groups/${ids.group}`;
const mr = () => `${p()}/merge_requests/${ids.iid}`;

const TABLE: readonly Row[] = [
  // lib/api/projects.rb, groups.rb, users.rb: before { authenticate_non_get! }.
  ['Projects', () => p(), 200],
  ['Projects (user projects)', () => `/users/${ids.user}/projects`, 200],
  ['Groups', () => g(), 200],
  ['Groups (subgroups)', () => `${g()}/subgroups`, 200],
  ['Groups (projects)', () => `${g()}/projects`, 200],
  ['Users', () => `/users/${ids.user}`, 200],
  ['Users (status)', () => `/users/${ids.user}/status`, 200],
  ['Users (current user: resource :user, before { authenticate! })', () => '/user', 401],
  ['Users (custom attributes: authorize! :read_custom_attribute, a global ability)', () => `/users/${ids.user}/custom_attributes`, 403],
  ['Users (impersonation tokens: authenticated_as_admin!)', () => `/users/${ids.user}/impersonation_tokens`, 401],
  // lib/api/merge_requests.rb: before { authenticate_non_get! }; GET /merge_requests authenticates unless scope=all.
  ['MergeRequests (project list)', () => `${p()}/merge_requests`, 200],
  ['MergeRequests (group list)', () => `${g()}/merge_requests`, 200],
  ['MergeRequests (global list)', () => '/merge_requests', 401],
  ['MergeRequests (global list, scope=all)', () => '/merge_requests?scope=all', 200],
  ['MergeRequests (single)', () => mr(), 200],
  ['MergeRequests (participants)', () => `${mr()}/participants`, 200],
  ['MergeRequests (commits)', () => `${mr()}/commits`, 200],
  ['MergeRequests (changes)', () => `${mr()}/changes`, 200],
  ['MergeRequests (versions)', () => `${mr()}/versions`, 200],
  ['MergeRequests (time stats: TimeTrackingEndpoints)', () => `${mr()}/time_stats`, 200],
  // lib/api/events.rb: GET /events authenticates; the project's and a user's events do not.
  ['Events', () => '/events', 401],
  ['Events (project)', () => `${p()}/events`, 200],
  ['Events (user)', () => `/users/${ids.user}/events`, 200],
  // branches.rb, commits.rb, repositories.rb, files.rb: authorize! :download_code, user_project.
  ['Branches', () => `${p()}/repository/branches`, 200],
  ['Commits', () => `${p()}/repository/commits`, 200],
  ['Repositories (tree)', () => `${p()}/repository/tree`, 200],
  ['Files', () => `${p()}/repository/files/README.md?ref=master`, 200],
  // before { authenticate! }.
  ['Labels', () => `${p()}/labels`, 401],
  ['ProjectMilestones', () => `${p()}/milestones`, 401],
  ['Environments', () => `${p()}/environments`, 401],
  ['Members', () => `${p()}/members`, 401],
  ['AccessRequests', () => `${p()}/access_requests`, 401],
  ['DeployKeys', () => `${p()}/deploy_keys`, 401],
  ['Services', () => `${p()}/services`, 401],
  ['NotificationSettings', () => '/notification_settings', 401],
  ['Todos', () => '/todos', 401],
  ['Version', () => '/version', 401],
  ['Epics (forgelog: authenticated)', () => `${g()}/epics`, 401],
  // authenticated_as_admin!.
  ['Settings', () => '/application/settings', 401],
  ['AuditEvents', () => '/audit_events', 401],
  ['GeoNodes', () => '/geo_nodes', 401],
  ['DeployKeys (instance)', () => '/deploy_keys', 401],
  // before { authorize_admin_project } / authorize_read_feature_flags!: an ability, not a user.
  ['ProtectedBranches', () => `${p()}/protected_branches`, 403],
  ['FeatureFlags', () => `${p()}/feature_flags`, 403],
];

describe('an anonymous GET on a public resource, per API class', () => {
  it.each(TABLE)('%s', async (_class, path, status) => {
    const res = await api.get(path(), { token: null });
    expect(res.status).toBe(status);
    if (status === 401) expect(res.body).toEqual({ message: '401 Unauthorized' });
  });
});
