import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('project');

const SCRIPT = clientScript(String.raw`
url, token, user_token = os.environ["FORGELOG_URL"], os.environ["FORGELOG_TOKEN"], os.environ["USER_TOKEN"]
g = gitlab.Gitlab(url, private_token=token)
me = gitlab.Gitlab(url, private_token=user_token)

created = me.projects.create({"name": "Py Project", "description": "made by python", "tag_list": ["b", "a"]})
out["created"] = created.attributes

group = g.groups.create({"name": "Py Group", "path": "py-group", "visibility": "internal"})
in_group = [g.projects.create({"name": "Py In Group %d" % n, "namespace_id": group.id, "visibility": "internal"}) for n in range(3)]
out["group_project_ids"] = [p.id for p in in_group]
out["group_list"] = [p.attributes for p in g.groups.get(group.id).projects.list()]
out["group_list_simple"] = [sorted(p.attributes.keys()) for p in g.groups.get(group.id).projects.list(simple=True)]

for n in range(3):
    g.projects.create({"name": "Py Extra %d" % n})
out["keyset_ids"] = [p.id for p in g.projects.list(iterator=True, pagination="keyset", order_by="id", per_page=2)]
out["offset_ids"] = [p.id for p in g.projects.list(get_all=True, per_page=2)]
out["owned"] = [p.path for p in me.projects.list(owned=True)]

got = me.projects.get("%s/py-project" % created.namespace["path"])
out["got"] = got.attributes
got.description = "edited by python"
got.save()
out["saved"] = me.projects.get(created.id).attributes

got.star()
out["starred"] = me.projects.get(created.id).star_count
try:
    got.star()
except gitlab.exceptions.GitlabCreateError as e:
    out["star_again"] = e.response_code
got.unstar()
got.archive()
out["archived"] = me.projects.get(created.id).archived
got.unarchive()

try:
    me.projects.create({"name": "Py Project"})
except gitlab.exceptions.GitlabCreateError as e:
    out["duplicate"] = [e.response_code, e.error_message]
try:
    me.projects.get(in_group[0].id + 1000)
except gitlab.exceptions.GitlabGetError as e:
    out["missing"] = [e.response_code, e.error_message]

got.delete()
try:
    me.projects.get(created.id)
except gitlab.exceptions.GitlabGetError as e:
    out["deleted"] = e.response_code
`);


describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: projects`, () => {
  let api: TestServer;
  let out: any;
  let user: any;
  beforeAll(async () => {
    api = await startTestServer();
    const created = await api.createUser({ username: 'pyuser', name: 'Py User' });
    user = created.user;
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, USER_TOKEN: created.token });
  });
  afterAll(() => api?.close());

  it("creates a project in the caller's namespace: gl.projects.create({'name': …})", () => {
    expect(out.created).toMatchObject({
      name: 'Py Project',
      path: 'py-project',
      path_with_namespace: 'pyuser/py-project',
      name_with_namespace: 'Py User / Py Project',
      description: 'made by python',
      tag_list: ['a', 'b'],
      visibility: 'private',
      namespace: { kind: 'user', path: 'pyuser' },
      owner: { id: user.id },
    });
  });

  it("lists a group's projects: group.projects.list()", () => {
    expect(out.group_list.map((p: any) => p.id)).toEqual([...out.group_project_ids].reverse());
    expect(out.group_list[0]).toMatchObject({ namespace: { full_path: 'py-group', kind: 'group' }, visibility: 'internal' });
    expect(out.group_list_simple[0]).not.toContain('_links');
  });

  it("iterates every project with keyset pagination, following GitLab's Link without URL warnings", () => {
    expect(out.keyset_ids).toHaveLength(7);
    expect(out.keyset_ids).toEqual([...out.keyset_ids].sort((a: number, b: number) => b - a));
    expect(out.offset_ids).toEqual(out.keyset_ids);
    expect(out.warnings).toEqual([]);
  });

  it('gets by path, saves, stars (304 the second time), archives', () => {
    expect(out.owned).toEqual(['py-project']);
    expect(out.got.id).toBe(out.created.id);
    expect(out.got.permissions).toEqual({ project_access: { access_level: 40, notification_level: 3 }, group_access: null });
    expect(out.saved.description).toBe('edited by python');
    expect(out.starred).toBe(1);
    expect(out.star_again).toBe(304);
    expect(out.archived).toBe(true);
  });

  it('raises GitLab’s errors, and deletes (202, asynchronous)', () => {
    expect(out.duplicate).toEqual([400, { name: ['has already been taken'], path: ['has already been taken'], limit_reached: [] }]);
    expect(out.missing).toEqual([404, '404 Project Not Found']);
    expect(out.deleted).toBe(404);
  });
});
