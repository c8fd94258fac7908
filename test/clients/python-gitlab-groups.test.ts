import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('group');

const SCRIPT = clientScript(String.raw`
url, token, member_token = os.environ["FORGELOG_URL"], os.environ["FORGELOG_TOKEN"], os.environ["MEMBER_TOKEN"]
g = gitlab.Gitlab(url, private_token=token)
parent = g.groups.create({"name": "Py Parent", "path": "py-parent", "visibility": "internal"})
out["parent"] = parent.attributes
child = g.groups.create({"name": "Py Child", "path": "py-child", "parent_id": parent.id})
out["child"] = child.attributes
for n in range(4):
    g.groups.create({"name": "Py Extra %d" % n, "path": "py-extra-%d" % n})

out["all_ids"] = [x.id for x in g.groups.list(get_all=True)]
out["paged_ids"] = [x.id for x in g.groups.list(get_all=True, per_page=2)]
out["searched"] = [x.full_path for x in g.groups.list(search="py-extra", order_by="path", get_all=True)]

got = g.groups.get("py-parent/py-child")
out["got"] = got.attributes
out["subgroups"] = [s.attributes for s in g.groups.get(parent.id).subgroups.list()]

got.description = "edited by python"
got.save()
out["saved"] = g.groups.get(child.id).attributes

parent.customattributes.set("team", "py")
out["filtered"] = [x.path for x in g.groups.list(custom_attributes={"team": "py"}, get_all=True)]

try:
    g.groups.create({"name": "Dup", "path": "PY-PARENT"})
except gitlab.exceptions.GitlabCreateError as e:
    out["duplicate"] = [e.response_code, e.error_message]
try:
    g.groups.get("no/such")
except gitlab.exceptions.GitlabGetError as e:
    out["missing"] = [e.response_code, e.error_message]

as_member = gitlab.Gitlab(url, private_token=member_token)
out["member_sees"] = [x.full_path for x in as_member.groups.list(get_all=True)]
out["member_available"] = sorted(x.full_path for x in as_member.groups.list(all_available=True, get_all=True))

g.groups.get("py-extra-0").delete()
try:
    g.groups.get("py-extra-0")
except gitlab.exceptions.GitlabGetError as e:
    out["deleted"] = e.response_code
`);


describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: groups`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    const member = await api.createUser({ username: 'pymember' });
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, MEMBER_TOKEN: member.token });
  });
  afterAll(() => api?.close());

  it('creates groups and subgroups with gl.groups.create', () => {
    expect(out.parent).toMatchObject({ name: 'Py Parent', path: 'py-parent', full_path: 'py-parent', visibility: 'internal', parent_id: null, projects: [] });
    expect(out.child).toMatchObject({ path: 'py-child', full_path: 'py-parent/py-child', full_name: 'Py Parent / Py Child', parent_id: out.parent.id, visibility: 'private' });
  });

  it('lists every group with get_all=True, following Link rel="next" without URL warnings', () => {
    expect(out.all_ids.length).toBe(6);
    expect(out.paged_ids).toEqual(out.all_ids);
    expect(out.searched).toEqual(['py-extra-0', 'py-extra-1', 'py-extra-2', 'py-extra-3']);
    expect(out.warnings).toEqual([]);
  });

  it("gets a group by full path: gl.groups.get('parent/child')", () => {
    expect(out.got).toMatchObject({ id: out.child.id, full_path: 'py-parent/py-child', web_url: `${api.url}/groups/py-parent/py-child` });
    expect(out.got.runners_token).toEqual(expect.any(String));
  });

  it('lists subgroups: group.subgroups.list()', () => {
    expect(out.subgroups.map((s: any) => s.full_path)).toEqual(['py-parent/py-child']);
  });

  it('saves an edited group and sets custom attributes', () => {
    expect(out.saved.description).toBe('edited by python');
    expect(out.filtered).toEqual(['py-parent']);
  });

  it('raises GitLab’s errors', () => {
    expect(out.duplicate).toEqual([400, 'Failed to save group {:path=>["has already been taken"]}']);
    expect(out.missing).toEqual([404, '404 Group Not Found']);
  });

  it('lists for a non-member only with all_available', () => {
    expect(out.member_sees).toEqual([]);
    expect(out.member_available).toEqual(['py-parent']);
  });

  it('deletes a group (202, asynchronous)', () => {
    expect(out.deleted).toBe(404);
  });
});
