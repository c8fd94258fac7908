import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, createWriteStream } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportBundleTo, importBundleFile } from '../../src/cli/bundle.js';
import { loadConfig, type Config } from '../../src/config.js';
import { sealPending } from '../../src/eventstore/seal.js';
import { rebuildProjections } from '../../src/projections/rebuild.js';
import { PROJECTORS } from '../../src/projections/registry.js';
import { listen, openRuntime, type Runtime } from '../../src/runtime.js';
import { waitUntilReadable } from '../eventstore/audit-support.js';
import { openTestDatabase } from '../support/database.js';
import { settled } from '../support/fixtures.js';
import { APP_ROUTES } from '../support/routes.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { sshPublicKey } from '../support/ssh-keys.js';

/**
 * Issue 25 §2, the round trip: a broad scenario written through the API; the answers (status,
 * body, pagination headers) of every list and single GET its data reaches, as root, as a
 * member and anonymously; the database exported as a bundle (the CLI's function), imported
 * into a new migrated database, every projection rebuilt, served again — and every answer
 * compared byte for byte.
 *
 * Excluded, and why (docs/operations.md, "Moving an instance: export and import"):
 * - `runners_token` (groups' and projects' single answers, to administrators): derived from the
 *   instance key `runners_token`, which is never in the log or a bundle; the new instance has
 *   its own key, so its tokens differ. The field is compared for presence and shape only.
 * - application settings' secrets (`akismet_api_key`): sealed in the log under the source's
 *   instance key `application_settings`, which never travels; the new instance reads them as
 *   unset until an administrator sets them again (checked below).
 * - `/-/metrics`, `/-/health`…, `/api/v4/version`: the process, not the data.
 */

const EXTERNAL_URL = 'http://forge.example.com';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const COMPARED_HEADERS = ['content-type', 'x-total', 'x-total-pages', 'x-page', 'x-per-page', 'x-next-page', 'x-prev-page', 'link', 'content-disposition'];

interface Answer {
  status: number;
  headers: Record<string, string | null>;
  body: string;
}

let source: TestServer;
let target: { runtime: Runtime; server: Server; url: string } | undefined;
let dir: string;
/** Paths (under the host) and the token to read them with. */
const reads: { path: string; token: string | null; as: string }[] = [];
const before = new Map<string, Answer>();

async function ok<T = any>(response: Promise<{ status: number; body: T; text: string }>, status = 201): Promise<T> {
  const res = await response;
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.text}`);
  return res.body;
}

async function answer(base: string, path: string, token: string | null): Promise<Answer> {
  const response = await fetch(`${base}${path}`, { headers: token === null ? {} : { 'PRIVATE-TOKEN': token }, redirect: 'manual' });
  const bytes = Buffer.from(await response.arrayBuffer());
  const headers = Object.fromEntries(COMPARED_HEADERS.map((h) => [h, response.headers.get(h)]));
  return { status: response.status, headers, body: bytes.toString('base64') };
}

/** The answer as compared: runners tokens (derived from the instance's own key) reduced to their shape. */
function comparable(a: Answer): Answer & { text?: unknown } {
  const text = Buffer.from(a.body, 'base64').toString('utf8');
  if (!(a.headers['content-type'] ?? '').includes('json')) return a;
  const masked = text
    .replace(/"runners_token":"[^"]*"/g, (m) => `"runners_token":"<${m.length - 18} characters>"`)
    .replace(/"akismet_api_key":(?:"[^"]*"|null)/g, '"akismet_api_key":"<sealed under the instance key>"');
  return { ...a, body: '', text: masked };
}

async function multipart(path: string, fields: Record<string, string>, file?: { name: string; bytes: Buffer; filename: string }) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  if (file) form.append(file.name, new Blob([file.bytes], { type: 'image/png' }), file.filename);
  const response = await fetch(`${source.apiUrl}${path}`, { method: 'POST', body: form, headers: { 'PRIVATE-TOKEN': source.rootToken } });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`${path}: ${response.status} ${text}`);
  return JSON.parse(text) as any;
}

/** The scenario: what the reads below reach. */
async function buildScenario() {
  const api = source;
  const alice = await multipart('/users', { email: 'alice@example.com', username: 'alice', name: 'Alice', password: 'password123', skip_confirmation: 'true' }, { name: 'avatar', bytes: PNG, filename: 'alice.png' });
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
    epic: epic.iid as number,
    broadcast: broadcast.id as number,
    commit: first.id as string,
    aliceToken,
    bobToken: bob.token,
  };
  return ids;
}

type Ids = Awaited<ReturnType<typeof buildScenario>>;

/** Ids found in list answers (awards, versions, todos, audit events…) for the single reads after them. */
async function discovered(ids: Ids) {
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

function plan(ids: Ids, found: Awaited<ReturnType<typeof discovered>>) {
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
    '/-/log/head', `/-/log/proof/consistency?first=1&second=${found.treeSize}`, `/-/log/proof/inclusion?position=1&tree_size=${found.treeSize}`,
  ].map((path) => ({ path: `/api/v4${path}`, token: source.rootToken as string | null, as: 'root' }));
  asRoot.push({ path: `/uploads/-/system/user/avatar/${ids.alice}/alice.png`, token: null, as: 'anonymous' });
  const asMember = ['/user', '/projects?membership=true', '/groups', '/issues', '/merge_requests', '/todos', '/events', `/projects/${ids.privateProject}`, `/projects/${ids.project}/issues?scope=all`, '/snippets'];
  const asAnonymous = ['/projects', '/groups', `/projects/${ids.project}`, `/projects/${ids.privateProject}`, `/projects/${ids.project}/issues`, `/projects/${ids.project}/merge_requests/${ids.mr}`, '/snippets/public', `/users/${ids.alice}`];
  return [
    ...asRoot,
    ...asMember.map((path) => ({ path: `/api/v4${path}`, token: ids.aliceToken as string | null, as: 'alice' })),
    ...asMember.map((path) => ({ path: `/api/v4${path}`, token: ids.bobToken as string | null, as: 'bob' })),
    ...asAnonymous.map((path) => ({ path: `/api/v4${path}`, token: null, as: 'anonymous' })),
  ];
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'forgelog-round-trip-'));
  source = await startTestServer({ externalUrl: EXTERNAL_URL });
  const ids = await buildScenario();
  // Everything sealed before the reads: the in-process sealer then has nothing left to change.
  await waitUntilReadable(source.handle.db);
  await sealPending(source.handle.db);
  reads.push(...plan(ids, await discovered(ids)));
  // Recorded again if the log moved meanwhile (a reactor's late event: a merge request's
  // mergeability, a todo), so the answers are those of the log that is exported.
  const logSize = async () => Number((await source.handle.db.selectFrom('events').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
  for (let round = 0; round < 5; round++) {
    const size = await logSize();
    for (const read of reads) before.set(`${read.as} ${read.path}`, await answer(source.url, read.path, read.token));
    await settled(source);
    if ((await logSize()) === size) break;
  }
}, 300_000);

afterAll(async () => {
  if (target) {
    await new Promise<void>((resolve) => target!.server.close(() => resolve()));
    await target.runtime.close();
  }
  await source?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('export, import into an empty database, rebuild --all', () => {
  it('answers every GET the scenario reaches byte for byte as the source did', async () => {
    const file = join(dir, 'bundle.ndjson');
    const out = createWriteStream(file);
    await exportBundleTo(source.handle.db, out);
    out.end();
    await finished(out);

    const handle = await openTestDatabase();
    // Another instance: test databases share their template's instance keys; this one has its own.
    const { rows: keys } = await sql<{ name: string }>`select name from instance_keys`.execute(handle.db);
    for (const { name } of keys) await sql`update instance_keys set secret = ${randomBytes(32).toString('hex')} where name = ${name}`.execute(handle.db);
    const report = await importBundleFile(handle.db, file);
    expect(report.counts.events).toBeGreaterThan(50);
    await rebuildProjections(handle, PROJECTORS);
    const config: Config = { ...loadConfig({}), port: 0, logLevel: 'silent', rootToken: source.rootToken, externalUrl: EXTERNAL_URL };
    const runtime = await openRuntime(config, { handle, logger: pino({ level: 'silent' }), migrate: false });
    const { server, port } = await listen(runtime, 0);
    target = { runtime, server: server as Server, url: `http://127.0.0.1:${port}` };

    const differences: string[] = [];
    for (const read of reads) {
      const was = before.get(`${read.as} ${read.path}`)!;
      const now = await answer(target.url, read.path, read.token);
      const a = comparable(was);
      const b = comparable(now);
      const [x, y] = [JSON.stringify(a), JSON.stringify(b)];
      if (x === y) continue;
      let at = 0;
      while (x[at] === y[at]) at++;
      const around = (text: string) => text.slice(Math.max(0, at - 150), at + 250);
      differences.push(`${read.as} GET ${read.path}\n  source: …${around(x)}\n  import: …${around(y)}`);
    }
    expect(differences.join('\n')).toBe('');

    // Nothing answered 5xx, most answered 200, and the reads reach a broad part of the API.
    const statuses = [...before.values()].map((a) => a.status);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(reads.length * 0.9);
    const templates = APP_ROUTES.filter((r) => r.method === 'GET' && r.path.startsWith('/api/v4/')).map((r) => ({
      path: r.path,
      pattern: new RegExp(`^${r.path.replace(/:[a-z_]+(\{[^}]*\})?/g, '[^/]+').replace(/\./g, '\\.')}$`),
    }));
    const reached = new Set(reads.flatMap((read) => templates.filter((t) => t.pattern.test(read.path.split('?')[0]!)).map((t) => t.path)));
    console.log(`import round trip: ${reads.length} reads, ${reached.size} of ${templates.length} GET route templates under /api/v4`);
    expect(reached.size).toBeGreaterThan(150);

    // A settings secret sealed under the source's key reads as unset here, and can be set again.
    const settings = async () => (await (await fetch(`${target!.url}/api/v4/application/settings`, { headers: { 'PRIVATE-TOKEN': source.rootToken } })).json()) as any;
    expect((await source.get('/application/settings')).body.akismet_api_key).toBe('sealed-at-the-source');
    expect(await settings()).toMatchObject({ akismet_enabled: true, akismet_api_key: null });

    // Reactors did not fire again for the imported history: the new instance appended nothing.
    await runtime.worker?.waitUntilCaughtUp({ timeoutMs: 30_000 });
    const appended = await handle.db.selectFrom('events').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    expect(Number(appended.n)).toBe(report.counts.events);

    // The imported claims refuse a colliding write; new ids continue after the imported ones.
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${target!.url}/api/v4${path}`, { method: 'POST', headers: { 'PRIVATE-TOKEN': source.rootToken, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as any };
    };
    const taken = await post('/users', { email: 'alice2@example.com', username: 'alice', name: 'Alice again', password: 'password123', skip_confirmation: true });
    expect(taken).toMatchObject({ status: 409, body: { message: 'Username has already been taken' } });
    expect((await post('/groups', { name: 'Again', path: 'round-trip' })).status).toBe(400);
    const carol = await post('/users', { email: 'carol@example.com', username: 'carol', name: 'Carol', password: 'password123', skip_confirmation: true });
    expect(carol.status).toBe(201);
    const users = (await source.get('/users?per_page=100')).body as { id: number }[];
    expect(carol.body.id).toBeGreaterThan(Math.max(...users.map((u) => u.id)));
    const issue = await post(`/projects/${before.size > 0 ? JSON.parse(Buffer.from(before.get(`root /api/v4/projects/round-trip%2Fapp`)!.body, 'base64').toString()).id : 0}/issues`, { title: 'After the import' });
    expect(issue.status).toBe(201);
    expect(issue.body.iid).toBe(3);
    const reset = await fetch(`${target!.url}/api/v4/application/settings`, { method: 'PUT', headers: { 'PRIVATE-TOKEN': source.rootToken, 'content-type': 'application/json' }, body: JSON.stringify({ akismet_api_key: 'sealed-here' }) });
    expect(reset.status).toBe(200);
    expect((await settings()).akismet_api_key).toBe('sealed-here');
  }, 300_000);
});
