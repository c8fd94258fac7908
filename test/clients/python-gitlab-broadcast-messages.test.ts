import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('broadcast message');

const SCRIPT = clientScript(String.raw`
url, token, user_token = env["FORGELOG_URL"], env["FORGELOG_TOKEN"], env["USER_TOKEN"]
g = gitlab.Gitlab(url, private_token=token)

created = g.broadcastmessages.create({"message": "Important information"})
out["created"] = created.attributes
timed = g.broadcastmessages.create({"message": "Later", "starts_at": "2035-01-01T00:00:00Z", "ends_at": "2035-01-02T00:00:00Z", "color": "#999999", "font": "#444444"})
out["timed"] = timed.attributes
out["listed"] = [m.id for m in g.broadcastmessages.list(get_all=True)]
out["got"] = g.broadcastmessages.get(created.id).attributes

msg = g.broadcastmessages.get(created.id)
msg.font = "#444444"
msg.color = "#999999"
msg.save()
out["saved"] = g.broadcastmessages.get(created.id).attributes

try:
    g.broadcastmessages.create({"message": "x", "color": "pink"})
except gitlab.exceptions.GitlabCreateError as e:
    out["bad_color"] = [e.response_code, e.error_message]
try:
    gitlab.Gitlab(url, private_token=user_token).broadcastmessages.list()
except gitlab.exceptions.GitlabListError as e:
    out["as_user"] = [e.response_code, e.error_message]

g.broadcastmessages.delete(timed.id)
msg.delete()
try:
    g.broadcastmessages.get(created.id)
except gitlab.exceptions.GitlabGetError as e:
    out["deleted"] = [e.response_code, e.error_message]
out["left"] = [m.id for m in g.broadcastmessages.list(get_all=True)]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: broadcast messages`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    const user = await api.createUser();
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, USER_TOKEN: user.token });
  });
  afterAll(() => api?.close());

  it('creates with the defaults and with given times and colours: gl.broadcastmessages.create()', () => {
    expect(out.created).toMatchObject({ id: expect.any(Number), message: 'Important information', color: '#E75E40', font: '#FFFFFF', active: true, target_path: null });
    expect(Date.parse(out.created.ends_at) - Date.parse(out.created.starts_at)).toBe(60 * 60 * 1000);
    expect(out.timed).toMatchObject({ message: 'Later', starts_at: '2035-01-01T00:00:00.000Z', ends_at: '2035-01-02T00:00:00.000Z', color: '#999999', font: '#444444', active: false });
  });

  it('lists and gets: gl.broadcastmessages.list() / get()', () => {
    expect(out.listed).toEqual([out.timed.id, out.created.id]);
    expect(out.got).toEqual(out.created);
  });

  it('saves a message: msg.save()', () => {
    expect(out.saved).toEqual({ ...out.created, color: '#999999', font: '#444444' });
  });

  it('raises GitLab’s errors', () => {
    expect(out.bad_color).toEqual([400, { color: ['must be a valid color code'] }]);
    expect(out.as_user).toEqual([403, '403 Forbidden']);
  });

  it('deletes: gl.broadcastmessages.delete() / msg.delete()', () => {
    expect(out.deleted).toEqual([404, '404 Not found']);
    expect(out.left).toEqual([]);
    expect(out.warnings).toEqual([]);
  });
});
