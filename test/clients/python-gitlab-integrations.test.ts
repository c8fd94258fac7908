import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('integration');

// python-gitlab 3.12's project.services and project.integrations both call /projects/:id/integrations.
const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)

slack = project.services.get("slack")
out["fresh"] = slack.attributes
slack.webhook = "https://93.184.216.34/hooks/abc"
slack.channel = "general"
slack.push_events = False
slack.save()
out["saved"] = project.services.get("slack").attributes
out["integration"] = project.integrations.get("slack").attributes
out["listed"] = [i.slug for i in project.integrations.list()]

try:
    bad = project.integrations.get("slack")
    bad.webhook = "http://127.0.0.1/hook"
    bad.save()
except gitlab.exceptions.GitlabUpdateError as e:
    out["blocked"] = [e.response_code, e.error_message]

project.services.get("slack").delete()
out["deleted"] = project.integrations.get("slack").attributes
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: integrations`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = await createProject(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id) });
  });
  afterAll(() => api?.close());

  it('project.services.get("slack") answers a kind never set, as GitLab builds it', () => {
    expect(out.fresh).toMatchObject({ id: null, slug: 'slack', active: false, push_events: true, properties: { branches_to_be_notified: 'all' } });
  });

  it('.save() sends the changed attributes; project.integrations.get("slack") reads them back', () => {
    expect(out.saved).toMatchObject({ slug: 'slack', active: true, push_events: false, properties: { webhook: 'https://93.184.216.34/hooks/abc', channel: 'general' } });
    expect(out.integration).toEqual(out.saved);
    expect(out.listed).toEqual(['slack']);
  });

  it('surfaces the SSRF refusal as GitlabUpdateError', () => {
    expect(out.blocked[0]).toBe(400);
    expect(out.blocked[1]).toEqual({ webhook: ["is blocked: Requests to localhost are not allowed"] });
  });

  it('.delete() deactivates it and nils its properties', () => {
    expect(out.deleted).toMatchObject({ id: out.saved.id, active: false, properties: { webhook: null, channel: null } });
    expect(out.warnings).toEqual([]);
  });
});
