import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { sshPublicKey } from '../support/ssh-keys.js';

warnIfUnavailable('deploy key');

const SCRIPT = String.raw`
import json, os
import gitlab

env = os.environ
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
out = {}
project = g.projects.get(int(env["PROJECT_ID"]))
other = g.projects.get(int(env["OTHER_ID"]), lazy=True)

created = project.keys.create({"title": "CI", "key": env["KEY"], "can_push": True})
out["created"] = created.attributes
out["listed"] = [(k.id, k.title, k.can_push) for k in project.keys.list(get_all=True)]

key = project.keys.get(created.id)
key.title = "CI renamed"
key.can_push = False
key.save()
out["saved"] = project.keys.get(created.id).attributes

out["enabled"] = other.keys.enable(created.id)
out["other"] = [k.id for k in other.keys.list(get_all=True)]
out["all"] = [k.attributes for k in g.deploykeys.list(get_all=True)]

try:
    project.keys.create({"title": "bad", "key": "not a key"})
except gitlab.exceptions.GitlabCreateError as e:
    out["invalid"] = [e.response_code, e.error_message]
try:
    project.keys.get(999999)
except gitlab.exceptions.GitlabGetError as e:
    out["missing"] = [e.response_code, e.error_message]
try:
    other.keys.enable(999999)
except gitlab.exceptions.GitlabProjectDeployKeyError as e:
    out["enable_missing"] = [e.response_code, e.error_message]

project.keys.delete(created.id)
out["after_delete"] = [k.id for k in project.keys.list(get_all=True)]
other.keys.delete(created.id)
out["all_after"] = [k.id for k in g.deploykeys.list(get_all=True)]
print(json.dumps(out, default=str))
`;

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: deploy keys`, () => {
  let api: TestServer;
  let out: any;
  const key = sshPublicKey('ed25519', 'ci@example.com');
  let project: { id: number };
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    project = await createProject(api);
    const other = await createProject(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id), OTHER_ID: String(other.id), KEY: key });
  });
  afterAll(() => api?.close());

  it('creates, lists, gets and saves a key: project.keys', () => {
    expect(out.created).toMatchObject({ title: 'CI', key, can_push: true });
    expect(out.listed).toEqual([[out.created.id, 'CI', true]]);
    expect(out.saved).toMatchObject({ id: out.created.id, title: 'CI renamed', can_push: false });
  });

  it('enables a key in another project and lists every key: project.keys.enable(), gl.deploykeys.list()', () => {
    expect(out.enabled).toEqual({ id: out.created.id, title: 'CI renamed', key, created_at: out.created.created_at });
    expect(out.other).toEqual([out.created.id]);
    expect(out.all).toEqual([out.enabled]);
  });

  it('raises GitLab’s errors', () => {
    expect(out.invalid).toEqual([
      400,
      { 'deploy_key.key': ['is invalid', 'type is forbidden. Must be RSA, DSA, ECDSA, or ED25519'], 'deploy_key.fingerprint': ['cannot be generated'] },
    ]);
    expect(out.missing).toEqual([404, '404 Not found']);
    expect(out.enable_missing).toEqual([404, '404 Deploy Key Not Found']);
  });

  it('deletes: project.keys.delete(), the key with its last project', () => {
    expect(out.after_delete).toEqual([]);
    expect(out.all_after).toEqual([]);
  });
});
