import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGroup, createProject, eventually, settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('container registry');

const SECRET = 'python-registry-secret';

// python-gitlab 3.x's delete_in_bulk takes name_regex_delete (its first, required argument) and
// sends it with keep_n as query parameters of DELETE …/tags.
const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
project = g.projects.get(int(env["PROJECT_ID"]), lazy=True)

repositories = project.repositories.list()
out["repositories"] = [r.attributes for r in repositories]
repo = repositories[0]
out["tags"] = [t.name for t in repo.tags.list(get_all=True)]
out["tag"] = repo.tags.get("v1").attributes
repo.tags.delete("v1")
out["after_delete"] = [t.name for t in repo.tags.list(get_all=True)]
repo.tags.delete_in_bulk(name_regex_delete=".*", keep_n=2)
try:
    repo.tags.delete_in_bulk(".*")
except gitlab.exceptions.GitlabDeleteError as e:
    out["too_soon"] = [e.response_code, e.error_message]

group = g.groups.get(int(env["GROUP_ID"]), lazy=True)
out["group"] = [r.path for r in group.registry_repositories.list()]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: container registry`, () => {
  let api: TestServer;
  let out: any;
  let projectId: number;
  let path: string;
  beforeAll(async () => {
    api = await startTestServer({ registryNotificationSecret: SECRET, registryHost: 'registry.example.com' });
    await settled(api);
    const group = await createGroup(api);
    const project = await createProject(api, { group });
    projectId = project.id;
    path = project.path_with_namespace;
    // The registry reports five tags, v1 the oldest.
    const events = ['v1', 'v2', 'v3', 'v4', 'latest'].map((tag, i) => ({
      id: `py-${i}`,
      action: 'push',
      timestamp: `2030-01-0${i + 1}T00:00:00.000Z`,
      target: { repository: path, tag, digest: `sha256:${String(i).repeat(64)}`, size: 100 + i },
    }));
    const res = await fetch(`${api.apiUrl}/container_registry_event/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/vnd.docker.distribution.events.v1+json', authorization: SECRET },
      body: JSON.stringify({ events }),
    });
    expect(res.status).toBe(200);
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PROJECT_ID: String(projectId), GROUP_ID: String(group.id) });
  });
  afterAll(() => api?.close());

  it('lists: project.repositories.list(), repo.tags.list() / .get(), group.registry_repositories.list()', () => {
    expect(out.repositories).toEqual([
      { id: expect.any(Number), name: '', path, project_id: projectId, location: `registry.example.com/${path}`, created_at: expect.any(String) },
    ]);
    expect(out.tags).toEqual(['latest', 'v1', 'v2', 'v3', 'v4']);
    expect(out.tag).toMatchObject({ name: 'v1', path: `${path}:v1`, digest: `sha256:${'0'.repeat(64)}`, total_size: 100, revision: null });
    expect(out.group).toEqual([path]);
  });

  it('deletes: repo.tags.delete(), then repo.tags.delete_in_bulk(name_regex_delete=".*", keep_n=2), once an hour', async () => {
    expect(out.after_delete).toEqual(['latest', 'v2', 'v3', 'v4']);
    expect(out.too_soon).toEqual([400, 'This request has already been made. You can run this at most once an hour for a given container repository']);
    expect(out.warnings).toEqual([]);
    const [repository] = (await api.get(`/projects/${projectId}/registry/repositories`)).body;
    const names = await eventually(async () => {
      const tags = (await api.get(`/projects/${projectId}/registry/repositories/${repository.id}/tags`)).body.map((t: any) => t.name);
      return tags.length === 3 ? tags : undefined;
    });
    // latest is never removed; of v2–v4 the two newest are kept.
    expect(names).toEqual(['latest', 'v3', 'v4']);
  });
});
