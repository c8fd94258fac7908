import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('audit events');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
group = g.groups.get(int(env["GROUP_ID"]))

everything = g.audit_events.list(get_all=True)
out["instance"] = [e.attributes for e in everything]
out["instance_groups"] = [e.details["add"] for e in g.audit_events.list(entity_type="Group", entity_id=group.id, get_all=True)]
out["one"] = g.audit_events.get(everything[0].id).attributes
out["group"] = [e.attributes for e in group.audit_events.list(get_all=True)]
out["group_one"] = group.audit_events.get(out["group"][0]["id"]).attributes
try:
    g.audit_events.list(entity_id=1)
except gitlab.exceptions.GitlabListError as e:
    out["missing_type"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: audit events`, () => {
  let api: TestServer;
  let out: any;
  let group: { id: number; full_path: string };
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    group = await createGroup(api, {});
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, GROUP_ID: String(group.id) });
  });
  afterAll(() => api?.close());

  it('lists and gets instance audit events: gl.audit_events.list() / .get()', () => {
    expect(out.instance.length).toBeGreaterThanOrEqual(2);
    expect(out.instance_groups).toEqual(['user_access', 'group']);
    expect(out.one).toEqual(out.instance[0]);
    expect(out.missing_type).toEqual([400, 'entity_type is missing']);
  });

  it("lists and gets a group's audit events: group.audit_events.list() / .get()", () => {
    expect(out.group.map((e: any) => [e.entity_type, e.entity_id, e.details.add])).toEqual([
      ['Group', group.id, 'user_access'],
      ['Group', group.id, 'group'],
    ]);
    expect(out.group[1].details).toMatchObject({ add: 'group', target_id: group.full_path, target_type: 'Group', target_details: group.full_path, entity_path: group.full_path });
    expect(out.group_one).toEqual(out.group[0]);
    expect(out.warnings).toEqual([]);
  });
});
