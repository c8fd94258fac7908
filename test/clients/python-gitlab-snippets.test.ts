import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('snippet');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
other = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["OTHER_TOKEN"])

# Personal snippets: gl.snippets
mine = g.snippets.create({"title": "greeting", "file_name": "hello.py", "content": "print('hello')", "visibility": "public"})
out["created"] = mine.attributes
secret = g.snippets.create({"title": "secret", "file_name": "s.txt", "content": "hush", "visibility": "private"})
out["listed"] = [s.title for s in g.snippets.list(get_all=True)]
out["public"] = [s.id for s in other.snippets.public(get_all=True)]
out["one"] = g.snippets.get(mine.id).attributes
out["content"] = g.snippets.get(mine.id).content().decode()

mine.title = "greeting, renamed"
mine.content = "print('hi')"
mine.save()
out["saved"] = [g.snippets.get(mine.id).title, g.snippets.get(mine.id).content().decode()]
out["agent"] = mine.user_agent_detail()

try:
    other.snippets.get(secret.id)
except gitlab.exceptions.GitlabGetError as e:
    out["hidden"] = [e.response_code, e.error_message]

secret.delete()
try:
    g.snippets.get(secret.id)
except gitlab.exceptions.GitlabGetError as e:
    out["deleted"] = [e.response_code, e.error_message]

# Project snippets: project.snippets
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)
ps = project.snippets.create({"title": "build", "file_name": "build.sh", "content": "make", "visibility": "internal", "description": "how to build"})
out["project_created"] = ps.attributes
out["project_listed"] = [s.title for s in project.snippets.list(get_all=True)]
got = project.snippets.get(ps.id)
out["project_one"] = got.attributes
out["project_content"] = got.content().decode()
got.file_name = "build2.sh"
got.save()
out["project_saved"] = project.snippets.get(ps.id).file_name
out["project_agent"] = got.user_agent_detail()
got.delete()
out["project_after_delete"] = [s.id for s in project.snippets.list(get_all=True)]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: snippets`, () => {
  let api: TestServer;
  let out: any;
  let projectId: number;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = await createProject(api);
    projectId = project.id;
    const other = await api.createUser({ username: `snippet-reader-${process.pid}` });
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, OTHER_TOKEN: other.token, PROJECT_ID: String(project.id) });
  });
  afterAll(() => api?.close());

  it('creates, lists and reads personal snippets: gl.snippets.create() / .list() / .public() / .get(), snippet.content()', () => {
    expect(out.created).toMatchObject({ title: 'greeting', file_name: 'hello.py', visibility: 'public', project_id: null, raw_url: `${api.url}/snippets/${out.created.id}/raw` });
    expect(out.listed).toEqual(['secret', 'greeting']);
    expect(out.public).toContain(out.created.id);
    expect(out.one).toEqual(out.created);
    expect(out.content).toBe("print('hello')");
    expect(out.hidden).toEqual([404, '404 Snippet Not Found']);
  });

  it("saves and deletes them, and shows an administrator the creating request's user agent: snippet.save() / .delete() / .user_agent_detail()", () => {
    expect(out.saved).toEqual(['greeting, renamed', "print('hi')"]);
    expect(out.agent).toEqual({ user_agent: expect.stringMatching(/python-gitlab/), ip_address: expect.any(String), akismet_submitted: false });
    expect(out.deleted).toEqual([404, '404 Snippet Not Found']);
  });

  it('works on project snippets: project.snippets.create() / .list() / .get(), content(), save(), user_agent_detail(), delete()', () => {
    expect(out.project_created).toMatchObject({ title: 'build', file_name: 'build.sh', description: 'how to build', visibility: 'internal', project_id: projectId });
    expect(out.project_created).not.toHaveProperty('raw_url');
    expect(out.project_listed).toEqual(['build']);
    expect(out.project_one).toEqual(out.project_created);
    expect(out.project_content).toBe('make');
    expect(out.project_saved).toBe('build2.sh');
    expect(out.project_agent).toMatchObject({ user_agent: expect.stringMatching(/python-gitlab/), akismet_submitted: false });
    expect(out.project_after_delete).toEqual([]);
    expect(out.warnings).toEqual([]);
  });
});
