import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('member');

const SCRIPT = clientScript(String.raw`
url, token, visitor_token = env["FORGELOG_URL"], env["FORGELOG_TOKEN"], env["VISITOR_TOKEN"]
alice, bob, visitor = int(env["ALICE_ID"]), int(env["BOB_ID"]), int(env["VISITOR_ID"])
g = gitlab.Gitlab(url, private_token=token)
group = g.groups.get(int(env["GROUP_ID"]))
sub = g.groups.get(int(env["SUBGROUP_ID"]))

created = group.members.create({"user_id": alice, "access_level": gitlab.const.DEVELOPER_ACCESS})
out["created"] = created.attributes
sub.members.create({"user_id": bob, "access_level": 20, "expires_at": "2035-06-07"})
out["members"] = [(m.username, m.access_level) for m in group.members.list(get_all=True)]
out["members_all"] = sorted((m.username, m.access_level, m.expires_at) for m in sub.members_all.list(get_all=True))
out["members_all_one"] = sub.members_all.get(alice).attributes
out["queried"] = [m.id for m in group.members.list(query=env["ALICE_NAME"], get_all=True)]

member = group.members.get(alice)
member.access_level = gitlab.const.MAINTAINER_ACCESS
member.save()
out["saved"] = group.members.get(alice).access_level

try:
    group.members.create({"user_id": alice, "access_level": 30})
except gitlab.exceptions.GitlabCreateError as e:
    out["duplicate"] = [e.response_code, e.error_message]
try:
    group.members.get(visitor)
except gitlab.exceptions.GitlabGetError as e:
    out["missing"] = [e.response_code, e.error_message]

project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)
project.members.create({"user_id": visitor, "access_level": 10})
out["project_all"] = sorted((m.username, m.access_level) for m in project.members_all.list(get_all=True))
try:
    project.members.create({"user_id": bob, "access_level": 50})
except gitlab.exceptions.GitlabCreateError as e:
    out["project_owner"] = [e.response_code, e.error_message]
project.members.delete(visitor)
out["project_direct"] = [m.id for m in project.members.list(get_all=True)]

as_visitor = gitlab.Gitlab(url, private_token=visitor_token)
request = as_visitor.groups.get(group.id, lazy=True).accessrequests.create({})
out["requested"] = request.attributes
pending = group.accessrequests.list(get_all=True)
out["pending"] = [r.id for r in pending]
pending[0].approve(access_level=gitlab.const.REPORTER_ACCESS)
out["approved"] = group.members.get(visitor).access_level

group.members.delete(visitor)
as_visitor.groups.get(group.id, lazy=True).accessrequests.create({})
group.accessrequests.delete(visitor)
out["after_deny"] = [r.id for r in group.accessrequests.list(get_all=True)]
`);


describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: members and access requests`, () => {
  let api: TestServer;
  let out: any;
  let alice: any, bob: any, visitor: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    [alice, bob, visitor] = [await api.createUser({ name: 'Alice Py' }), await api.createUser(), await api.createUser()];
    const group = await createGroup(api, { visibility: 'public' });
    const sub = await createGroup(api, { parent: group, visibility: 'public' });
    const project = await createProject(api, { group: sub });
    out = await runPython(SCRIPT, {
      FORGELOG_URL: api.url,
      FORGELOG_TOKEN: api.rootToken,
      VISITOR_TOKEN: visitor.token,
      ALICE_ID: String(alice.user.id),
      ALICE_NAME: 'alice py',
      BOB_ID: String(bob.user.id),
      VISITOR_ID: String(visitor.user.id),
      GROUP_ID: String(group.id),
      SUBGROUP_ID: String(sub.id),
      PROJECT_ID: String(project.id),
    });
  });
  afterAll(() => api?.close());

  it('adds a member: group.members.create()', () => {
    expect(out.created).toMatchObject({ id: alice.user.id, username: alice.user.username, access_level: 30, expires_at: null, group_id: expect.anything() });
    expect(out.members).toEqual([
      ['root', 50],
      [alice.user.username, 30],
    ]);
    expect(out.queried).toEqual([alice.user.id]);
  });

  it('lists inherited members: group.members_all.list()', () => {
    expect(out.members_all).toEqual(
      [
        ['root', 50, null],
        [alice.user.username, 30, null],
        [bob.user.username, 20, '2035-06-07'],
      ].sort(),
    );
    expect(out.members_all_one).toMatchObject({ id: alice.user.id, access_level: 30 });
  });

  it('saves a member and raises GitLab’s errors', () => {
    expect(out.saved).toBe(40);
    expect(out.duplicate).toEqual([409, 'Member already exists']);
    expect(out.missing).toEqual([404, '404 Not found']);
    expect(out.project_owner).toEqual([400, { access_level: ['is not included in the list'] }]);
  });

  it('manages project members', () => {
    expect(out.project_all).toEqual(
      [
        ['root', 50],
        [alice.user.username, 40],
        [bob.user.username, 20],
        [visitor.user.username, 10],
      ].sort(),
    );
    expect(out.project_direct).toEqual([]);
  });

  it('requests, approves and denies access: group.accessrequests', () => {
    expect(out.requested).toMatchObject({ id: visitor.user.id, username: visitor.user.username, requested_at: expect.any(String) });
    expect(out.pending).toEqual([visitor.user.id]);
    expect(out.approved).toBe(20);
    expect(out.after_deny).toEqual([]);
    expect(out.warnings).toEqual([]);
  });
});
