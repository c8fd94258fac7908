import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toStoredEvent } from '../../src/eventstore/store.js';
import { rebuildProjections } from '../../src/projections/rebuild.js';
import { PROJECTORS } from '../../src/projections/registry.js';
import { rowsLeftBy, snapshotTables } from '../support/replay.js';
import { sshPublicKey } from '../support/ssh-keys.js';
import { startTestServer, type TestServer } from '../support/server.js';

// A rebuild's bulk replay skips the per-batch stream-version guard (the tables are empty) and
// records every stream's version once at the end: the record must be what the guard would
// have left, event by event.

let api: TestServer;
beforeAll(async () => {
  api = await startTestServer({ registryNotificationSecret: 'rebuild-registry-secret' });
});
afterAll(() => api.close());

const VERSION_TABLES = PROJECTORS.map((p) => `${p.name}_stream_versions`);

/** Every status of a scenario step must be a success: the log must hold what the API did. */
const ok = <R extends { status: number; text: string }>(res: R): R => {
  expect(res.status, res.text).toBeLessThan(300);
  return res;
};

/** The stream versions tables left by `apply`, one event at a time, in log order, into empty copies of every projection's tables. */
async function versionsAppliedOneByOne() {
  const tables = [...new Set(PROJECTORS.flatMap((p) => p.tables))];
  return rowsLeftBy(
    api.handle.db,
    tables,
    async (trx) => {
      const log = await trx.selectFrom('events').selectAll().orderBy('transaction_id').orderBy('global_position').execute();
      for (const event of log.map(toStoredEvent)) {
        for (const projector of PROJECTORS) if (projector.handles.includes(event.type)) await projector.apply(event, trx);
      }
    },
    VERSION_TABLES,
  );
}

/** A scenario of every area: streams with several events of each projection, some handled by several projections. */
async function writeSome(round: number) {
  const alice = await api.createUser({ username: `alice${round}` });
  const bob = await api.createUser({ username: `bob${round}` });
  const carol = await api.createUser({ username: `carol${round}` });
  ok(await api.put(`/users/${alice.user.id}`, { bio: 'hello', username: `alice${round}b` }));
  ok(await api.put('/user/status', { emoji: 'coffee', message: 'busy' }, { token: bob.token }));
  ok(await api.put('/user/status', { emoji: '', message: '' }, { token: bob.token }));
  ok(await api.put(`/users/${bob.user.id}/custom_attributes/team`, { value: 'red' }));
  ok(await api.post(`/users/${carol.user.id}/block`));
  ok(await api.post(`/users/${carol.user.id}/unblock`));
  const parent = ok(await api.post('/groups', { name: `Parent ${round}`, path: `parent${round}`, visibility: 'public' })).body;
  const child = ok(await api.post('/groups', { name: 'Child', path: 'child', parent_id: parent.id })).body;
  ok(await api.post(`/groups/${parent.id}/members`, { user_id: alice.user.id, access_level: 30 }));
  ok(await api.put(`/groups/${parent.id}/members/${alice.user.id}`, { access_level: 40 }));
  ok(await api.post(`/groups/${child.id}/members`, { user_id: carol.user.id, access_level: 20 }));
  const project = ok(await api.post('/projects', { name: 'Tool', namespace_id: child.id })).body;
  ok(await api.post(`/projects/${project.id}/star`, undefined, { token: alice.token }));
  ok(await api.post(`/projects/${project.id}/archive`));
  ok(await api.post(`/projects/${project.id}/protected_branches`, { name: 'main' }));
  ok(await api.request('PATCH', `/projects/${project.id}/protected_branches/main`, { body: { code_owner_approval_required: true } }));
  ok(await api.post(`/projects/${project.id}/protected_branches`, { name: 'release/*' }));
  ok(await api.del(`/projects/${project.id}/protected_branches/release%2F*`));
  ok(await api.post(`/projects/${project.id}/protected_tags`, { name: 'v*' }));
  ok(await api.post(`/projects/${project.id}/protected_tags`, { name: 'rc*', create_access_level: 30 }));
  ok(await api.del(`/projects/${project.id}/protected_tags/rc*`));
  ok(await api.put(`/groups/${child.id}`, { path: 'kid', name: 'Kid' }));
  ok(await api.put(`/groups/${parent.id}/saml`, { sso_url: 'https://idp.example.com/sso', certificate_fingerprint: 'aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd' }));
  const scimToken = ok(await api.post(`/groups/${parent.id}/scim/token`)).body.scim_token;
  const scimUsers = `${api.url}/api/scim/v2/groups/${parent.full_path}/Users`;
  const scimHeaders = { authorization: `Bearer ${scimToken}`, 'content-type': 'application/scim+json' };
  const provisioned = await fetch(scimUsers, { method: 'POST', headers: scimHeaders, body: JSON.stringify({ externalId: `uid-${round}`, userName: `scim${round}`, emails: [{ type: 'work', value: `scim${round}@example.com`, primary: true }], name: { formatted: 'Scim User' } }) });
  expect(provisioned.status).toBe(201);
  const patched = await fetch(`${scimUsers}/uid-${round}`, { method: 'PATCH', headers: scimHeaders, body: JSON.stringify({ Operations: [{ op: 'Replace', path: 'id', value: `uid-${round}b` }] }) });
  expect(patched.status).toBe(204);
  const mine = ok(await api.post('/projects', { name: 'Mine' }, { token: bob.token })).body;
  const commits = `/projects/${mine.id}/repository/commits`;
  ok(await api.post(commits, { branch: 'master', commit_message: 'One', actions: [{ action: 'create', file_path: 'a.txt', content: 'a' }] }, { token: bob.token }));
  ok(await api.post(commits, { branch: 'master', commit_message: 'Two', actions: [{ action: 'update', file_path: 'a.txt', content: 'b' }] }, { token: bob.token }));
  ok(await api.post(`/projects/${mine.id}/repository/branches`, { branch: 'topic', ref: 'master' }, { token: bob.token }));
  ok(await api.del(`/projects/${mine.id}/repository/branches/topic`, { token: bob.token }));
  ok(await api.post(`/projects/${mine.id}/repository/tags`, { tag_name: 'v1', ref: 'master', message: 'One', release_description: 'notes' }, { token: bob.token }));
  ok(await api.put(`/projects/${mine.id}/repository/tags/v1/release`, { description: 'more notes' }, { token: bob.token }));
  ok(await api.post(`/projects/${mine.id}/repository/tags`, { tag_name: 'v0', ref: 'master' }, { token: bob.token }));
  ok(await api.del(`/projects/${mine.id}/repository/tags/v0`, { token: bob.token }));
  ok(await api.post(commits, { branch: 'feature', start_branch: 'master', commit_message: 'Three', actions: [{ action: 'create', file_path: 'b.txt', content: 'b' }] }, { token: bob.token }));
  const mergeRequest = `/projects/${mine.id}/merge_requests`;
  const mr = ok(await api.post(mergeRequest, { title: 'Feature', source_branch: 'feature', target_branch: 'master', labels: `mr ${round}` }, { token: bob.token })).body;
  ok(await api.put(`${mergeRequest}/${mr.iid}`, { description: 'more', state_event: 'close' }, { token: bob.token }));
  ok(await api.put(`${mergeRequest}/${mr.iid}`, { state_event: 'reopen' }, { token: bob.token }));
  ok(await api.post(`${mergeRequest}/${mr.iid}/time_estimate`, { duration: '1h' }, { token: bob.token }));
  ok(await api.post(`${mergeRequest}/${mr.iid}/add_spent_time`, { duration: '30m' }, { token: bob.token }));
  ok(await api.post(`${mergeRequest}/${mr.iid}/unsubscribe`, undefined, { token: bob.token }));
  ok(await api.put(`${mergeRequest}/${mr.iid}/merge`, {}, { token: bob.token }));
  const review = ok(await api.post(`/projects/${mine.id}/environments`, { name: 'review/a' }, { token: bob.token })).body;
  ok(await api.put(`/projects/${mine.id}/environments/${review.id}`, { external_url: 'https://a.example.com' }, { token: bob.token }));
  ok(await api.post(`/projects/${mine.id}/environments/${review.id}/stop`, undefined, { token: bob.token }));
  ok(await api.del(`/projects/${mine.id}/environments/${review.id}`, { token: bob.token }));
  ok(await api.post(`/projects/${mine.id}/environments`, { name: 'production' }, { token: bob.token }));
  const milestone = ok(await api.post(`/projects/${mine.id}/milestones`, { title: `M ${round}`, due_date: '2020-02-01' }, { token: bob.token })).body;
  ok(await api.put(`/projects/${mine.id}/milestones/${milestone.id}`, { state_event: 'close', description: 'shipped' }, { token: bob.token }));
  const dropped = ok(await api.post(`/projects/${mine.id}/milestones`, { title: `Dropped ${round}` }, { token: bob.token })).body;
  ok(await api.del(`/projects/${mine.id}/milestones/${dropped.id}`, { token: bob.token }));
  const bug = ok(await api.post(`/projects/${mine.id}/labels`, { name: `bug ${round}`, color: 'red', priority: 1 }, { token: bob.token })).body;
  ok(await api.put(`/projects/${mine.id}/labels/${bug.id}`, { new_name: `defect ${round}`, priority: '' }, { token: bob.token }));
  ok(await api.post(`/projects/${mine.id}/labels`, { name: `gone ${round}`, color: '#000' }, { token: bob.token }));
  ok(await api.del(`/projects/${mine.id}/labels`, { query: { name: `gone ${round}` }, token: bob.token }));
  ok(await api.post(`/projects/${mine.id}/feature_flags`, { name: 'flag', description: 'one' }, { token: bob.token }));
  ok(await api.post(`/projects/${mine.id}/feature_flags/flag/scopes`, { environment_scope: 'review/*', active: false, strategies: [{ name: 'default', parameters: {} }] }, { token: bob.token }));
  ok(await api.put(`/projects/${mine.id}/feature_flags/flag/scopes/review%2F*`, { active: true, strategies: [{ name: 'userWithId', parameters: { userIds: 'a' } }] }, { token: bob.token }));
  ok(await api.post(`/projects/${mine.id}/feature_flags`, { name: 'gone' }, { token: bob.token }));
  ok(await api.del(`/projects/${mine.id}/feature_flags/gone`, { token: bob.token }));
  const image = (tag: string) => ({ action: 'push', target: { repository: `${mine.path_with_namespace}/web`, tag, digest: `sha256:${tag.padEnd(64, '0')}`, size: 10 } });
  const registry = await fetch(`${api.apiUrl}/container_registry_event/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/vnd.docker.distribution.events.v1+json', authorization: 'rebuild-registry-secret' },
    body: JSON.stringify({ events: [image('a1'), image('b2'), image('c3')] }),
  });
  expect(registry.status).toBe(200);
  const [repository] = ok(await api.get(`/projects/${mine.id}/registry/repositories`, { token: bob.token })).body;
  ok(await api.del(`/projects/${mine.id}/registry/repositories/${repository.id}/tags/b2`, { token: bob.token }));
  const key = ok(await api.post(`/projects/${mine.id}/deploy_keys`, { title: 'ci', key: sshPublicKey() }, { token: bob.token })).body;
  ok(await api.put(`/projects/${mine.id}/deploy_keys/${key.id}`, { can_push: true }, { token: bob.token }));
  ok(await api.post(`/projects/${project.id}/deploy_keys/${key.id}/enable`));
  ok(await api.del(`/projects/${mine.id}/deploy_keys/${key.id}`, { token: bob.token }));
  const userKey = ok(await api.post('/user/keys', { title: 'laptop', key: sshPublicKey() }, { token: bob.token })).body;
  ok(await api.post('/user/keys', { title: 'desktop', key: sshPublicKey() }, { token: bob.token }));
  ok(await api.del(`/user/keys/${userKey.id}`, { token: bob.token }));
  ok(await api.put(`/projects/${mine.id}/services/slack`, { webhook: 'https://93.184.216.34/hook', push_events: false }, { token: bob.token }));
  ok(await api.del(`/projects/${mine.id}/integrations/slack`, { token: bob.token }));
  ok(await api.put('/notification_settings', { level: 'watch' }, { token: alice.token }));
  ok(await api.put(`/projects/${mine.id}/notification_settings`, { level: 'custom', new_note: true }, { token: bob.token }));
  ok(await api.del(`/users/${carol.user.id}`, { query: { hard_delete: true } }));
  const message = ok(await api.post('/broadcast_messages', { message: `Round ${round}` })).body;
  ok(await api.put(`/broadcast_messages/${message.id}`, { color: '#000' }));
  ok(await api.put('/application/settings', { sign_in_text: `Round ${round}` }));
  ok(await api.put('/application/settings', { default_projects_limit: 1000 + round }));
  const node = ok(await api.post('/geo_nodes', { name: `geo-${round}`, url: `https://geo-${round}.example.com` })).body;
  ok(await api.put(`/geo_nodes/${node.id}`, { repos_max_capacity: round }));
  const epic = ok(await api.post(`/groups/${parent.id}/epics`, { title: `Epic ${round}` }, { token: alice.token })).body;
  const childEpic = ok(await api.post(`/groups/${parent.id}/epics`, { title: 'Child', parent_id: epic.id, start_date_fixed: '2020-01-01', start_date_is_fixed: true }, { token: alice.token })).body;
  const grouped = ok(await api.post('/projects', { name: `Grouped ${round}`, namespace_id: parent.id })).body;
  const epicIssues = `/groups/${parent.id}/epics/${epic.iid}/issues`;
  ok(await api.post(`/projects/${grouped.id}/issues`, { title: 'In an epic', epic_id: epic.id }));
  const second = ok(await api.post(`${epicIssues}/${ok(await api.post(`/projects/${grouped.id}/issues`, { title: 'Second' })).body.id}`)).body;
  const [, first] = ok(await api.get(epicIssues)).body;
  ok(await api.put(`${epicIssues}/${second.id}`, { move_before_id: first.epic_issue_id }));
  ok(await api.del(`${epicIssues}/${second.id}`));
  ok(await api.put(`/groups/${parent.id}/epics/${epic.iid}`, { state_event: 'close' }, { token: alice.token }));
  ok(await api.post(`/groups/${parent.id}/epics/${childEpic.iid}/todo`, undefined, { token: alice.token }));
  const todo = ok(await api.post(`/groups/${parent.id}/epics/${epic.iid}/todo`, undefined, { token: alice.token })).body;
  ok(await api.post(`/todos/${todo.id}/mark_as_done`, undefined, { token: alice.token }));
  const issues = `/projects/${mine.id}/issues`;
  const issue = ok(await api.post(issues, { title: 'Broken', labels: `defect ${round}` }, { token: bob.token })).body;
  ok(await api.put(`${issues}/${issue.iid}`, { description: 'very', state_event: 'close' }, { token: bob.token }));
  ok(await api.put(`${issues}/${issue.iid}`, { state_event: 'reopen' }, { token: bob.token }));
  const gone = ok(await api.post(issues, { title: 'Gone' }, { token: bob.token })).body;
  ok(await api.del(`${issues}/${gone.iid}`, { token: bob.token }));
  const note = ok(await api.post(`${issues}/${issue.iid}/notes`, { body: 'first' }, { token: bob.token })).body;
  ok(await api.put(`${issues}/${issue.iid}/notes/${note.id}`, { body: 'edited' }, { token: bob.token }));
  ok(await api.post(`${mergeRequest}/${mr.iid}/notes`, { body: `on the merge request, for #${issue.iid}` }, { token: bob.token }));
  ok(await api.post(`${issues}/${issue.iid}/award_emoji`, { name: 'thumbsup' }, { token: bob.token }));
  const award = ok(await api.post(`${issues}/${issue.iid}/notes/${note.id}/award_emoji`, { name: 'smile' }, { token: bob.token })).body;
  ok(await api.del(`${issues}/${issue.iid}/notes/${note.id}/award_emoji/${award.id}`, { token: bob.token }));
  const snippet = ok(await api.post(`/projects/${mine.id}/snippets`, { title: 'Snip', file_name: 's.txt', content: 'x', visibility: 'private' }, { token: bob.token })).body;
  ok(await api.put(`/projects/${mine.id}/snippets/${snippet.id}`, { title: 'Snipped' }, { token: bob.token }));
  const personal = ok(await api.post('/snippets', { title: 'Mine', file_name: 'm.txt', content: 'y', visibility: 'private' }, { token: bob.token })).body;
  ok(await api.del(`/snippets/${personal.id}`, { token: bob.token }));
  const hook = ok(await api.post(`/projects/${mine.id}/hooks`, { url: 'https://93.184.216.34/hook', push_events: true }, { token: bob.token })).body;
  ok(await api.put(`/projects/${mine.id}/hooks/${hook.id}`, { url: 'https://93.184.216.34/other', token: 'secret' }, { token: bob.token }));
  const systemHook = ok(await api.post('/hooks', { url: 'https://93.184.216.34/system' })).body;
  ok(await api.del(`/hooks/${systemHook.id}`));
  const board = ok(await api.post(`/projects/${mine.id}/boards`, { name: 'Board' }, { token: bob.token })).body;
  const column = ok(await api.post(`/projects/${mine.id}/labels`, { name: 'Column', color: '#428BCA' }, { token: bob.token })).body;
  const list = ok(await api.post(`/projects/${mine.id}/boards/${board.id}/lists`, { label_id: column.id }, { token: bob.token })).body;
  ok(await api.del(`/projects/${mine.id}/boards/${board.id}/lists/${list.id}`, { token: bob.token }));
  const related = ok(await api.post(issues, { title: 'Related' }, { token: bob.token })).body;
  ok(await api.post(`${issues}/${issue.iid}/links`, { target_project_id: String(mine.id), target_issue_iid: related.iid }, { token: bob.token }));
  const [link] = ok(await api.get(`${issues}/${issue.iid}/links`, { token: bob.token })).body;
  ok(await api.del(`${issues}/${issue.iid}/links/${link.issue_link_id}`, { token: bob.token }));
}

describe('rebuildProjections, stream versions', () => {
  it("leaves each projection's stream versions as applying the events one by one does, however the log is cut into pages", async () => {
    await writeSome(1);
    const expected = await versionsAppliedOneByOne();
    // Every projection that guards an event type has streams to record (the authorizations projection guards none: it recomputes).
    const guarding = new Set(PROJECTORS.filter((p) => p.guarded.length > 0).map((p) => `${p.name}_stream_versions`));
    expect(Object.entries(expected).filter(([table, rows]) => guarding.has(table) && rows.length === 0).map(([table]) => table)).toEqual([]);
    for (const batchSize of [1, 4, 5000]) {
      await rebuildProjections(api.handle, PROJECTORS, { batchSize });
      expect(await snapshotTables(api.handle.db, VERSION_TABLES), `pages of ${batchSize}`).toEqual(expected);
    }
  });

  it('also with writes landing while it replays (some in the bulk pages, some in the swap, some after it)', async () => {
    await Promise.all([writeSome(2), rebuildProjections(api.handle, PROJECTORS, { batchSize: 3 })]);
    expect(await snapshotTables(api.handle.db, VERSION_TABLES)).toEqual(await versionsAppliedOneByOne());
  });
});
