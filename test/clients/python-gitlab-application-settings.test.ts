import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('application settings');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
settings = g.settings.get()
out["fetched"] = settings.attributes
settings.default_projects_limit = 25
settings.domain_whitelist = ["example.com"]
settings.save()
again = g.settings.get()
out["saved"] = [again.default_projects_limit, again.domain_whitelist, again.signup_enabled]
settings = g.settings.get()
settings.throttle_authenticated_api_enabled = True
settings.throttle_authenticated_api_requests_per_period = 600
settings.save()
throttled = g.settings.get()
out["throttled"] = [settings.throttle_authenticated_api_enabled, throttled.throttle_authenticated_api_enabled, throttled.throttle_authenticated_api_requests_per_period, throttled.throttle_authenticated_api_period_in_seconds]
try:
    g.settings.update(new_data={"default_branch_protection": 7})
except gitlab.exceptions.GitlabUpdateError as e:
    out["refused"] = [e.response_code, e.error_message]
user = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["USER_TOKEN"])
try:
    user.settings.get()
except gitlab.exceptions.GitlabGetError as e:
    out["forbidden"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: application settings`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    const user = await api.createUser();
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, USER_TOKEN: user.token });
  });
  afterAll(() => api?.close());

  it('reads the settings: gl.settings.get()', () => {
    expect(out.fetched).toMatchObject({ id: 1, default_projects_limit: 100000, default_project_visibility: 'private', domain_whitelist: null });
  });

  it('changes one and reads it back: settings.save()', () => {
    expect(out.saved).toEqual([25, ['example.com'], true]);
  });

  it('round-trips a throttle setting: settings.throttle_authenticated_api_enabled = True; settings.save()', () => {
    expect(out.throttled).toEqual([true, true, 600, 3600]);
  });

  it("raises GitLab's errors", () => {
    expect(out.refused).toEqual([400, 'default_branch_protection does not have a valid value']);
    expect(out.forbidden).toEqual([403, '403 Forbidden']);
    expect(out.warnings).toEqual([]);
  });
});
