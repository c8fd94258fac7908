import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('environment');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)

production = project.environments.create({"name": "production", "external_url": "https://prod.example.com"})
out["created"] = production.attributes
review = project.environments.create({"name": "Review/Fix-Foo"})
out["review_slug"] = review.slug
out["listed"] = [e.name for e in project.environments.list(get_all=True)]
out["searched"] = [e.name for e in project.environments.list(search="rev", get_all=True)]
out["one"] = project.environments.get(production.id).attributes

review.external_url = "https://review.example.com"
review.save()
out["saved"] = project.environments.get(review.id).external_url

review.stop()
out["stopped"] = project.environments.get(review.id).state

try:
    project.environments.create({"name": "production"})
except gitlab.exceptions.GitlabCreateError as e:
    out["duplicate"] = [e.response_code, e.error_message]

project.environments.delete(review.id)
try:
    project.environments.get(review.id)
except gitlab.exceptions.GitlabGetError as e:
    out["deleted"] = [e.response_code, e.error_message]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: environments`, () => {
  let api: TestServer;
  let out: any;
  beforeAll(async () => {
    api = await startTestServer();
    await settled(api);
    const project = await createProject(api);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(project.id) });
  });
  afterAll(() => api?.close());

  it('creates and lists: project.environments.create() / .list()', () => {
    expect(out.created).toMatchObject({ name: 'production', slug: 'production', external_url: 'https://prod.example.com', state: 'available' });
    expect(out.review_slug).toMatch(/^review-fix-foo-[a-z0-9]{6}$/);
    expect(out.listed).toEqual(['production', 'Review/Fix-Foo']);
    expect(out.searched).toEqual(['Review/Fix-Foo']);
    expect(out.one).toMatchObject({ name: 'production', last_deployment: null });
  });

  it('saves, stops and deletes: .save(), .stop(), .delete()', () => {
    expect(out.saved).toBe('https://review.example.com');
    expect(out.stopped).toBe('stopped');
    expect(out.duplicate).toEqual([400, { name: ['has already been taken'] }]);
    expect(out.deleted).toEqual([404, '404 Not found']);
    expect(out.warnings).toEqual([]);
  });
});
