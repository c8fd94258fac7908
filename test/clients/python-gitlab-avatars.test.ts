import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('avatar');

// python-gitlab sends `avatar` (types.ImageAttribute) as a multipart file named avatar.png.
const SCRIPT = clientScript(String.raw`
import base64, tempfile, requests
url, token = os.environ["FORGELOG_URL"], os.environ["FORGELOG_TOKEN"]
png = base64.b64decode(os.environ["PNG"])
path = os.path.join(tempfile.mkdtemp(), "face.png")
with open(path, "wb") as f:
    f.write(png)
g = gitlab.Gitlab(url, private_token=token)

with open(path, "rb") as f:
    user = g.users.create({"email": "pyava@example.com", "username": "pyava", "name": "Py Ava", "password": "password123", "skip_confirmation": True, "avatar": f})
out["created_avatar_url"] = user.avatar_url
out["created_served"] = requests.get(user.avatar_url).content == png

user = g.users.get(user.id)
with open(path, "rb") as f:
    user.avatar = f
    user.bio = "with a face"
    user.save()
again = g.users.get(user.id)
out["saved"] = [again.avatar_url, again.bio]

with open(path, "rb") as f:
    group = g.groups.create({"name": "Py Ava Group", "path": "py-ava-group", "avatar": f})
out["group_avatar_url"] = group.avatar_url
# A private group's avatar is for who may read the group.
out["group_served"] = [requests.get(group.avatar_url).status_code, requests.get(group.avatar_url, headers={"PRIVATE-TOKEN": token}).content == png]

with open(path, "rb") as f:
    project = g.projects.create({"name": "py-ava-project", "avatar": f})
out["project_avatar_url"] = project.avatar_url

notes = os.path.join(tempfile.mkdtemp(), "notes.txt")
with open(notes, "wb") as f:
    f.write(b"not an image")
try:
    with open(notes, "rb") as f:
        g.groups.create({"name": "Py Bad", "path": "py-bad", "avatar": f})
except gitlab.exceptions.GitlabCreateError as e:
    out["refused"] = [e.response_code, e.error_message]
`);

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: avatars`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PNG });
  });
  afterAll(async () => {
    await api?.close();
  });

  it('creates a user with an avatar and serves it at avatar_url', () => {
    expect(out.created_avatar_url).toMatch(new RegExp(`^${api.url}/uploads/-/system/user/avatar/\\d+/avatar\\.png$`));
    expect(out.created_served).toBe(true);
  });

  it('saves a new avatar with user.save()', () => {
    expect(out.saved).toEqual([out.created_avatar_url, 'with a face']);
  });

  it('creates groups and projects with an avatar', () => {
    expect(out.group_avatar_url).toMatch(new RegExp(`^${api.url}/uploads/-/system/group/avatar/\\d+/avatar\\.png$`));
    expect(out.group_served).toEqual([404, true]);
    expect(out.project_avatar_url).toMatch(new RegExp(`^${api.url}/uploads/-/system/project/avatar/\\d+/avatar\\.png$`));
  });

  it('gets 400 for a file that is not an image', () => {
    // python-gitlab names every ImageAttribute file avatar.png: the bytes decide.
    expect(out.refused[0]).toBe(400);
    expect(out.refused[1]).toContain('file format is not supported');
    expect(out.warnings).toEqual([]);
  });
});
