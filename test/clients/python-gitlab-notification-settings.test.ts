import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('notification settings');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["USER_TOKEN"])

settings = g.notificationsettings.get()
out["global"] = settings.attributes
settings.level = "watch"
settings.save()
out["saved"] = g.notificationsettings.get().attributes
out["updated"] = g.notificationsettings.update(new_data={"level": "custom", "new_note": True}).get("events")
try:
    g.notificationsettings.update(new_data={"notification_email": "someone@example.com"})
except gitlab.exceptions.GitlabUpdateError as e:
    out["not_owned"] = [e.response_code, e.error_message]

group = g.groups.get(int(env["GROUP_ID"]), lazy=True)
out["group"] = group.notificationsettings.get().attributes
group_settings = group.notificationsettings.get()
group_settings.level = "disabled"
group_settings.save()
out["group_saved"] = group.notificationsettings.get().attributes

project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)
out["project"] = project.notificationsettings.get().attributes
try:
    project.notificationsettings.update(new_data={"level": "loud"})
except gitlab.exceptions.GitlabUpdateError as e:
    out["bad_level"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: notification settings`, () => {
  let api: TestServer;
  let out: any;
  let me: { user: any; token: string };
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    me = await api.createUser();
    const group = await createGroup(api, { visibility: 'public' });
    const project = await createProject(api, { group, visibility: 'public' });
    out = await runPython(SCRIPT, {
      FORGELOG_URL: api.url,
      USER_TOKEN: me.token,
      GROUP_ID: String(group.id),
      PROJECT_ID: String(project.id),
    });
  });
  afterAll(() => api?.close());

  it('reads and saves the global setting: gl.notificationsettings', () => {
    expect(out.global).toEqual({ level: 'participating', notification_email: me.user.email });
    expect(out.saved).toEqual({ level: 'watch', notification_email: me.user.email });
    expect(out.updated).toMatchObject({ new_note: true, new_issue: null, failed_pipeline: true });
    expect(out.not_owned).toEqual([400, { notification_email: ['is not an email you own'] }]);
  });

  it('reads and saves a group’s and a project’s: group.notificationsettings, project.notificationsettings', () => {
    // python-gitlab adds the parent's id (group_id, project_id) to the attributes.
    expect(out.group).toMatchObject({ level: 'global' });
    expect(out.group).not.toHaveProperty('events');
    expect(out.group_saved).toMatchObject({ level: 'disabled' });
    expect(out.project).toMatchObject({ level: 'global' });
    expect(out.bad_level).toEqual([400, "'loud' is not a valid level"]);
  });

  it('raises no warnings', () => {
    expect(out.warnings).toEqual([]);
  });
});
