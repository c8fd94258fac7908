import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import sshpk from 'sshpk';
import { settled } from '../support/fixtures.js';
import { pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { sshPublicKey } from '../support/ssh-keys.js';

warnIfUnavailable('user SSH key');

const SCRIPT = String.raw`
import json, os
import gitlab

env = os.environ
me = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["USER_TOKEN"])
me.auth()
admin = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
out = {}

created = me.user.keys.create({"title": "Laptop", "key": env["KEY"]})
out["created"] = created.attributes
out["listed"] = [k.attributes for k in me.user.keys.list(get_all=True)]
out["got"] = me.user.keys.get(created.id).attributes

try:
    me.user.keys.create({"title": "again", "key": env["KEY"]})
except gitlab.exceptions.GitlabCreateError as e:
    out["taken"] = [e.response_code, e.error_message]

user = admin.users.get(int(env["USER_ID"]))
by_admin = user.keys.create({"title": "By admin", "key": env["OTHER_KEY"]})
out["user_listed"] = [k.id for k in user.keys.list(get_all=True)]
out["key"] = admin.keys.get(by_admin.id).attributes
out["by_fingerprint"] = admin.keys.get(fingerprint=env["FINGERPRINT"]).id

user.keys.delete(by_admin.id)
me.user.keys.delete(created.id)
out["after"] = [k.id for k in me.user.keys.list(get_all=True)]
print(json.dumps(out, default=str))
`;

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: user SSH keys`, () => {
  let api: TestServer;
  let out: any;
  let user: { user: any; token: string };
  const key = sshPublicKey('ed25519', 'mia@laptop');
  const other = sshPublicKey('rsa2048', 'mia@desk');
  const fingerprint = sshpk.parseKey(other, 'ssh').fingerprint('sha256').toString('base64');
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    user = await api.createUser();
    out = await runPython(SCRIPT, {
      FORGELOG_URL: api.url,
      FORGELOG_TOKEN: api.rootToken,
      USER_TOKEN: user.token,
      USER_ID: String(user.user.id),
      KEY: key,
      OTHER_KEY: other,
      FINGERPRINT: fingerprint,
    });
  });
  afterAll(() => api?.close());

  it('adds, lists and gets the current user’s keys: gl.user.keys', () => {
    expect(out.created).toEqual({ id: expect.any(Number), title: 'Laptop', key, created_at: expect.any(String) });
    expect(out.listed).toEqual([out.created]);
    expect(out.got).toEqual(out.created);
    expect(out.taken).toEqual([400, { fingerprint: ['has already been taken'] }]);
  });

  it('adds and deletes a user’s keys as an administrator, and finds a key: user.keys, gl.keys.get()', () => {
    expect(out.user_listed).toHaveLength(2);
    expect(out.key).toMatchObject({ title: 'By admin', key: other, user: { id: user.user.id, username: user.user.username } });
    expect(out.by_fingerprint).toBe(out.key.id);
  });

  it('deletes: gl.user.keys.delete()', () => {
    expect(out.after).toEqual([]);
  });
});
