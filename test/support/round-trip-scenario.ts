import { settled } from './fixtures.js';
import type { TestServer } from './server.js';
import { sshPublicKey } from './ssh-keys.js';

/**
 * A broad scenario written through the API, and the GETs its data reaches (as root, as a
 * member, anonymously): the import round trip (test/operations/import-round-trip.test.ts)
 * compares their answers before and after an import; the OpenAPI answer check
 * (test/http/openapi-answers.test.ts) validates them against the document.
 */

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

/** The body of an answer of this status (201 unless told), else an error naming what came. */
export async function ok<T = any>(response: Promise<{ status: number; body: T; text: string }>, status = 201): Promise<T> {
  const res = await response;
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text}`);
  return res.body;
}

async function multipart(source: TestServer, path: string, fields: Record<string, string>, file?: { name: string; bytes: Buffer; filename: string }) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) form.append(file.name, new Blob([file.bytes], { type: 'image/png' }), file.filename);
  const response = await fetch(`${source.apiUrl}${path}`, { method: 'POST', body: form, headers: { 'PRIVATE-TOKEN': source.rootToken } });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`${path}: ${response.status} ${text}`);
  return JSON.parse(text) as any;
}

/** The scenario, as root, alice and bob: what the reads of plan() reach. */
export async function buildScenario(api: TestServer) {
  const alice = await multipart(api, '/users', { email: 'alice@example.com', username: 'alice', name: 'Alice', password: 'password123', skip_confirmation: 'true' }, { name: 'avatar', bytes: PNG, filename: 'alice.png' });
  const aliceToken = (await ok(api.post(`/users/${alice.id}/personal_access_tokens`, { name: 'rt', scopes: ['api'] }))).token as string;
  const bob = await api.createUser({ username: 'bob' });
  await ok(api.put('/user/status', { emoji: 'coffee', message: 'brewing' }, { token: aliceToken }), 200);
  await ok(api.put(`/users/${alice.id}/custom_attributes/team`, { value: 'core' }), 200);

  const group = await ok(api.post('/groups', { name: 'Round Trip', path: 'round-trip', visibility: 'public', description: 'the group' }));
  const subgroup = await ok(api.post('/groups', { name: 'Sub', path: 'sub', parent_id: group.id, visibility: 'internal' }));
  await ok(api.post(`/groups/${group.id}/members`, { user_id: alice.id, access_level: 30 }));
  await ok(api.post(`/groups/${subgroup.id}/members`, { user_id: bob.user.id, access_level: 20, expires_at: '2099-01-01' }));
  const project = await ok(api.post('/projects', { name: 'App', path: 'app', namespace_id: group.id, visibility: 'public', description: 'the app' }));
  const privateProject = await ok(api.post('/projects', { name: 'Secret', path: 'secret', namespace_id: subgroup.id, visibility: 'private' }));
  await ok(api.post(`/projects/${privateProject.id}/members`, { user_id: bob.user.id, access_level: 40 }));
  const p = `/projects/${project.id}`;

  // The repository: commits on master and a branch, a tag, protections.
  const first = await ok(api.post(`${p}/repository/commits`, { branch: 'master', commit_message: 'Initial', actions: [{ action: 'create', file_path: 'README.md', content: '# App\n' }, { action: 'create', file_path: 'src/main.ts', content: 'export {};\n' }] }));
  await ok(api.post(`${p}/repository/commits`, { branch: 'feature', start_branch: 'master', commit_message: 'Feature work', actions: [{ action: 'update', file_path: 'README.md', content: '# App\n\nWith a feature.\n' }] }, { token: aliceToken }));
  await ok(api.post(`${p}/repository/tags`, { tag_name: 'v1.0', ref: 'master', message: 'First release', release_description: 'Notes' }));
  await ok(api.post(`${p}/protected_branches`, { name: 'release/*' }));
  await ok(api.post(`${p}/protected_tags`, { name: 'v*' }));

  // Issues, labels, milestones, notes, emoji, links, boards.
  const label = await ok(api.post(`${p}/labels`, { name: 'bug', color: '#FF0000', description: 'a bug' }));
  const milestone = await ok(api.post(`${p}/milestones`, { title: 'v1', description: 'first', due_date: '2099-12-31' }));
  const issue = await ok(api.post(`${p}/issues`, { title: 'Broken thing', description: 'It breaks. cc @bob', labels: 'bug', milestone_id: milestone.id, assignee_ids: [alice.id] }));
  const issue2 = await ok(api.post(`${p}/issues`, { title: 'Second', confidential: true }, { token: aliceToken }));
  await ok(api.put(`${p}/issues/${issue2.iid}`, { state_event: 'close' }), 200);
  const note = await ok(api.post(`${p}/issues/${issue.iid}/notes`, { body: 'A comment' }, { token: aliceToken }));
  await ok(api.post(`${p}/issues/${issue.iid}/award_emoji`, { name: 'thumbsup' }));
  await ok(api.post(`${p}/issues/${issue.iid}/notes/${note.id}/award_emoji`, { name: 'tada' }));
  const discussion = await ok(api.post(`${p}/issues/${issue.iid}/discussions`, { body: 'A thread' }));
  await ok(api.post(`${p}/issues/${issue.iid}/links`, { target_project_id: project.id, target_issue_iid: issue2.iid }));
  await ok(api.post(`${p}/issues/${issue.iid}/time_estimate`, { duration: '3h' }), 200);
  const board = await ok(api.post(`${p}/boards`, { name: 'Sprint' }));
  const list = await ok(api.post(`${p}/boards/${board.id}/lists`, { label_id: label.id }));

  // A merge request with a note and an emoji.
  const mr = await ok(api.post(`${p}/merge_requests`, { source_branch: 'feature', target_branch: 'master', title: 'Add the feature', description: 'Closes #1', assignee_id: alice.id, labels: 'bug', milestone_id: milestone.id }));
  const mrNote = await ok(api.post(`${p}/merge_requests/${mr.iid}/notes`, { body: 'Looks good' }, { token: aliceToken }));
  await ok(api.post(`${p}/merge_requests/${mr.iid}/award_emoji`, { name: 'rocket' }, { token: aliceToken }));
  const mrDiscussion = await ok(api.post(`${p}/merge_requests/${mr.iid}/discussions`, { body: 'Question' }));

  // Snippets, hooks, environments, deploy keys, flags, epics, broadcast messages, settings.
  const snippet = await ok(api.post('/snippets', { title: 'Personal', file_name: 'a.rb', content: 'puts 1', visibility: 'public' }, { token: aliceToken }));
  const projectSnippet = await ok(api.post(`${p}/snippets`, { title: 'Project snippet', file_name: 'b.sh', code: 'echo 2', visibility: 'public' }));
  const snippetNote = await ok(api.post(`${p}/snippets/${projectSnippet.id}/notes`, { body: 'Nice snippet' }));
  const hook = await ok(api.post(`${p}/hooks`, { url: 'https://hooks.example.com/app', token: 'hook-secret', issues_events: true }));
  const groupHook = await ok(api.post(`/groups/${group.id}/hooks`, { url: 'https://hooks.example.com/group' }));
  const systemHook = await ok(api.post('/hooks', { url: 'https://hooks.example.com/system' }));
  const environment = await ok(api.post(`${p}/environments`, { name: 'production', external_url: 'https://app.example.com' }));
  const deployKey = await ok(api.post(`${p}/deploy_keys`, { title: 'CI', key: sshPublicKey('ed25519', 'ci@round-trip') }));
  const sshKey = await ok(api.post('/user/keys', { title: 'Laptop', key: sshPublicKey('rsa2048', 'alice@round-trip') }, { token: aliceToken }));
  await ok(api.post(`${p}/feature_flags`, { name: 'new_ui', description: 'the new UI', scopes: [{ environment_scope: '*', active: true, strategies: [{ name: 'default', parameters: {} }] }] }));
  const epic = await ok(api.post(`/groups/${group.id}/epics`, { title: 'Big epic', description: 'epic work', labels: 'planning' }));
  const broadcast = await ok(api.post('/broadcast_messages', { message: 'Maintenance tonight', starts_at: '2026-01-01T00:00:00Z', ends_at: '2099-01-01T00:00:00Z' }));
  await ok(api.put(`${p}/notification_settings`, { level: 'watch' }, { token: aliceToken }), 200);
  await ok(api.put('/application/settings', { default_projects_limit: 42, signup_enabled: false, akismet_enabled: true, akismet_api_key: 'sealed-at-the-source' }), 200);
  const commitNote = await ok(api.post(`${p}/repository/commits/${first.id}/comments`, { note: 'Nice commit' }));
  void commitNote;

  await settled(api);
  const ids = {
    alice: alice.id as number,
    bob: bob.user.id as number,
    group: group.id as number,
    subgroup: subgroup.id as number,
    project: project.id as number,
    privateProject: privateProject.id as number,
    label: label.id as number,
    milestone: milestone.id as number,
    issue: issue.iid as number,
    issue2: issue2.iid as number,
    note: note.id as number,
    discussion: discussion.id as string,
    board: board.id as number,
    list: list.id as number,
    mr: mr.iid as number,
    mrNote: mrNote.id as number,
    mrDiscussion: mrDiscussion.id as string,
    snippet: snippet.id as number,
    projectSnippet: projectSnippet.id as number,
    snippetNote: snippetNote.id as number,
    hook: hook.id as number,
    groupHook: groupHook.id as number,
    systemHook: systemHook.id as number,
    environment: environment.id as number,
    deployKey: deployKey.id as number,
    sshKey: sshKey.id as number,
    epic: epic.iid as number,
    broadcast: broadcast.id as number,
    commit: first.id as string,
    aliceToken,
    bobToken: bob.token,
  };
  return ids;
}

export type Ids = Awaited<ReturnType<typeof buildScenario>>;

/** Ids found in list answers (awards, versions, todos, audit events…) for the single reads after them. */
export async function discovered(source: TestServer, ids: Ids) {
  const get = async (path: string) => ((await source.get(path)).body ?? []) as any[];
  const p = `/projects/${ids.project}`;
  return {
    award: (await get(`${p}/issues/${ids.issue}/award_emoji`))[0]?.id as number,
    noteAward: (await get(`${p}/issues/${ids.issue}/notes/${ids.note}/award_emoji`))[0]?.id as number,
    mrAward: (await get(`${p}/merge_requests/${ids.mr}/award_emoji`))[0]?.id as number,
    version: (await get(`${p}/merge_requests/${ids.mr}/versions`))[0]?.id as number,
    audit: (await get('/audit_events'))[0]?.id as number,
    groupAudit: (await get(`/groups/${ids.group}/audit_events`))[0]?.id as number,
    labelEvent: (await get(`${p}/issues/${ids.issue}/resource_label_events`))[0]?.id as number,
    milestoneEvent: (await get(`${p}/issues/${ids.issue}/resource_milestone_events`))[0]?.id as number,
    stateEvent: (await get(`${p}/issues/${ids.issue2}/resource_state_events`))[0]?.id as number,
    treeSize: Number((await source.handle.db.selectFrom('log_tree_leaves').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n),
    blob: ((await get(`${p}/repository/tree`)) as { type: string; id: string }[]).find((e) => e.type === 'blob')?.id as string,
  };
}

export function plan(source: TestServer, ids: Ids, found: Awaited<ReturnType<typeof discovered>>) {
  const p = `/projects/${ids.project}`;
  const g = `/groups/${ids.group}`;
  const asRoot = [
    '/users', '/users?active=true', `/users/${ids.alice}`, `/users/${ids.bob}`, '/user', `/users/${ids.alice}/status`, `/users/alice/status`,
    `/users/${ids.alice}/custom_attributes`, `/users/${ids.alice}/custom_attributes/team`, `/users/${ids.alice}/impersonation_tokens`,
    `/users/${ids.alice}/projects`, `/users/${ids.alice}/starred_projects`, `/users/${ids.alice}/events`,
    '/groups', '/groups?all_available=true', `${g}`, `/groups/round-trip`, `${g}/subgroups`, `/groups/${ids.subgroup}`, `${g}/custom_attributes`, `${g}/projects`,
    `${g}/members`, `${g}/members/all`, `${g}/members/${ids.alice}`, `${g}/members/all/${ids.alice}`, `/groups/${ids.subgroup}/members/all`, `${g}/access_requests`,
    `${g}/notification_settings`, `${g}/audit_events`, `${g}/audit_events/${found.groupAudit}`, `${g}/hooks`, `${g}/hooks/${ids.groupHook}`,
    `${g}/epics`, `${g}/epics/${ids.epic}`, `${g}/epics/${ids.epic}/notes`, `${g}/epics/${ids.epic}/discussions`, `${g}/epics/${ids.epic}/award_emoji`,
    `${g}/merge_requests`, `${g}/issues`, `${g}/issues_statistics`, `${g}/registry/repositories`,
    '/projects', '/projects?order_by=id&sort=asc', '/projects?simple=true', '/projects?statistics=true', `${p}`, `/projects/round-trip%2Fapp`, `/projects/${ids.privateProject}`,
    `${p}/forks`, `${p}/members`, `${p}/members/all`, `${p}/members/all/${ids.alice}`, `/projects/${ids.privateProject}/members/${ids.bob}`, `${p}/access_requests`,
    `${p}/environments`, `${p}/environments/${ids.environment}`, `${p}/snippets`, `${p}/snippets/${ids.projectSnippet}`, `${p}/snippets/${ids.projectSnippet}/raw`,
    `${p}/snippets/${ids.projectSnippet}/user_agent_detail`, `${p}/snippets/${ids.projectSnippet}/notes`, `${p}/snippets/${ids.projectSnippet}/notes/${ids.snippetNote}`,
    `${p}/snippets/${ids.projectSnippet}/discussions`, `${p}/snippets/${ids.projectSnippet}/award_emoji`,
    '/snippets', '/snippets/public', `/snippets/${ids.snippet}`, `/snippets/${ids.snippet}/raw`, `/snippets/${ids.snippet}/user_agent_detail`,
    `${p}/merge_requests`, `${p}/merge_requests?state=all&labels=bug`, `${p}/merge_requests/${ids.mr}`, `${p}/merge_requests/${ids.mr}/versions`,
    `${p}/merge_requests/${ids.mr}/versions/${found.version}`, `${p}/merge_requests/${ids.mr}/commits`, `${p}/merge_requests/${ids.mr}/changes`,
    `${p}/merge_requests/${ids.mr}/time_stats`, `${p}/merge_requests/${ids.mr}/participants`, `${p}/merge_requests/${ids.mr}/closes_issues`,
    `${p}/merge_requests/${ids.mr}/notes`, `${p}/merge_requests/${ids.mr}/notes/${ids.mrNote}`, `${p}/merge_requests/${ids.mr}/discussions`,
    `${p}/merge_requests/${ids.mr}/discussions/${ids.mrDiscussion}`, `${p}/merge_requests/${ids.mr}/award_emoji`, `${p}/merge_requests/${ids.mr}/award_emoji/${found.mrAward}`,
    `${p}/merge_requests/${ids.mr}/notes/${ids.mrNote}/award_emoji`, `${p}/merge_requests/${ids.mr}/resource_label_events`,
    `${p}/merge_requests/${ids.mr}/resource_milestone_events`, `${p}/merge_requests/${ids.mr}/resource_state_events`, '/merge_requests?scope=all',
    '/broadcast_messages', `/broadcast_messages/${ids.broadcast}`, '/deploy_keys', `${p}/deploy_keys`, `${p}/deploy_keys/${ids.deployKey}`,
    '/notification_settings', `${p}/notification_settings`, `${p}/protected_branches`, `${p}/protected_branches/master`, `${p}/protected_tags`,
    `${p}/protected_tags/v*`, `${p}/repository/tags`, `${p}/repository/tags/v1.0`, '/application/settings', '/audit_events', `/audit_events/${found.audit}`,
    `${p}/services`, `${p}/integrations`, `${p}/hooks`, `${p}/hooks/${ids.hook}`, '/hooks', `/hooks/${ids.systemHook}`,
    '/events', `${p}/events`, `${p}/feature_flags`, `${p}/feature_flag_scopes`, `${p}/feature_flags/new_ui`, `${p}/feature_flags/new_ui/scopes`,
    `${p}/milestones`, `${p}/milestones/${ids.milestone}`, `${p}/milestones/${ids.milestone}/issues`, `${p}/milestones/${ids.milestone}/merge_requests`,
    `${p}/labels`, `${p}/labels/bug`, `${p}/labels/${ids.label}`, `${p}/boards`, `${p}/boards/${ids.board}`, `${p}/boards/${ids.board}/lists`,
    `${p}/boards/${ids.board}/lists/${ids.list}`, `${p}/issues/${ids.issue}/links`, '/todos', `${p}/registry/repositories`,
    `${p}/repository/commits`, `${p}/repository/commits?ref_name=feature`, `${p}/repository/commits/${ids.commit}`, `${p}/repository/commits/${ids.commit}/refs`,
    `${p}/repository/commits/${ids.commit}/merge_requests`, `${p}/repository/commits/${ids.commit}/diff`, `${p}/repository/commits/${ids.commit}/comments`,
    `${p}/repository/commits/${ids.commit}/discussions`, `${p}/repository/branches`, `${p}/repository/branches/feature`,
    `${p}/repository/blobs/${found.blob}`, `${p}/repository/blobs/${found.blob}/raw`, `${p}/repository/merge_base?refs[]=master&refs[]=feature`,
    `${p}/repository/contributors`, `${p}/repository/tree`, `${p}/repository/tree?recursive=true`, `${p}/repository/files/README.md/raw?ref=feature`,
    `${p}/repository/files/src%2Fmain.ts?ref=master`, `${p}/repository/compare?from=master&to=feature`, `${p}/repository/archive.tar.gz`,
    `${p}/issues/${ids.issue}`, '/issues?scope=all', `${p}/issues`, `${p}/issues?state=closed`, '/issues_statistics', `${p}/issues_statistics`,
    `${p}/issues/${ids.issue}/user_agent_detail`, `${p}/issues/${ids.issue}/closed_by`, `${p}/issues/${ids.issue}/related_merge_requests`,
    `${p}/issues/${ids.issue}/time_stats`, `${p}/issues/${ids.issue}/participants`, `${p}/issues/${ids.issue}/notes`, `${p}/issues/${ids.issue}/notes/${ids.note}`,
    `${p}/issues/${ids.issue}/discussions`, `${p}/issues/${ids.issue}/discussions/${ids.discussion}`, `${p}/issues/${ids.issue}/award_emoji`,
    `${p}/issues/${ids.issue}/award_emoji/${found.award}`, `${p}/issues/${ids.issue}/notes/${ids.note}/award_emoji`,
    `${p}/issues/${ids.issue}/notes/${ids.note}/award_emoji/${found.noteAward}`, `${p}/issues/${ids.issue}/resource_label_events`,
    `${p}/issues/${ids.issue}/resource_label_events/${found.labelEvent}`, `${p}/issues/${ids.issue}/resource_milestone_events`,
    `${p}/issues/${ids.issue}/resource_milestone_events/${found.milestoneEvent}`, `${p}/issues/${ids.issue2}/resource_state_events`,
    `${p}/issues/${ids.issue2}/resource_state_events/${found.stateEvent}`,
    `/users/${ids.alice}/keys`, `/keys/${ids.sshKey}`, `/keys/${ids.deployKey}`,
    '/-/log/head', `/-/log/proof/consistency?first=1&second=${found.treeSize}`, `/-/log/proof/inclusion?position=1&tree_size=${found.treeSize}`,
  ].map((path) => ({ path: `/api/v4${path}`, token: source.rootToken as string | null, as: 'root' }));
  asRoot.push({ path: `/uploads/-/system/user/avatar/${ids.alice}/alice.png`, token: null, as: 'anonymous' });
  const asMember = ['/user', '/projects?membership=true', '/groups', '/issues', '/merge_requests', '/todos', '/events', `/projects/${ids.privateProject}`, `/projects/${ids.project}/issues?scope=all`, '/snippets', '/user/keys'];
  const asAnonymous = ['/projects', '/groups', `/projects/${ids.project}`, `/projects/${ids.privateProject}`, `/projects/${ids.project}/issues`, `/projects/${ids.project}/merge_requests/${ids.mr}`, '/snippets/public', `/users/${ids.alice}`, `/users/alice/keys`];
  return [
    ...asRoot,
    ...asMember.map((path) => ({ path: `/api/v4${path}`, token: ids.aliceToken as string | null, as: 'alice' })),
    ...asMember.map((path) => ({ path: `/api/v4${path}`, token: ids.bobToken as string | null, as: 'bob' })),
    ...asAnonymous.map((path) => ({ path: `/api/v4${path}`, token: null, as: 'anonymous' })),
  ];
}
