import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { settled } from '../support/fixtures.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { clientScript, pythonGitlabAvailable, pythonGitlabVersion, runPython, warnIfUnavailable } from '../support/python-gitlab.js';

warnIfUnavailable('Geo node');

const SCRIPT = clientScript(String.raw`
g = gitlab.Gitlab(env["FORGELOG_URL"], private_token=env["FORGELOG_TOKEN"])
out["listed"] = [[n.name, n.primary, n.current] for n in g.geonodes.list(get_all=True)]
out["status"] = g.geonodes.status()
node = g.geonodes.get(int(env["SECONDARY_ID"]))
out["one"] = node.attributes
node.repos_max_capacity = 7
node.save()
out["saved"] = g.geonodes.get(node.id).repos_max_capacity
out["primary_status"] = g.geonodes.get(int(env["PRIMARY_ID"])).status()
try:
    node.status()
except gitlab.exceptions.GitlabGetError as e:
    out["no_status"] = [e.response_code, e.error_message]
try:
    g.geonodes.current_failures()
except gitlab.exceptions.GitlabGetError as e:
    out["failures"] = [e.response_code, e.error_message]
node.delete()
out["after_delete"] = [n.name for n in g.geonodes.list(get_all=True)]
`);

describe.skipIf(!pythonGitlabAvailable)(`python-gitlab ${pythonGitlabVersion}: Geo nodes`, () => {
  let api: TestServer;
  let out: any;
  let primaryId: number;
  beforeAll(async () => {
    api = await startTestServer({ geo: { ...loadConfig({}).geo, nodeName: 'primary' } });
    await settled(api);
    primaryId = (await api.post('/geo_nodes', { name: 'primary', url: api.url, primary: true })).body.id;
    const secondary = (await api.post('/geo_nodes', { name: 'secondary', url: 'https://secondary.example.com' })).body;
    out = await runPython(SCRIPT, { FORGELOG_URL: api.url, FORGELOG_TOKEN: api.rootToken, PRIMARY_ID: String(primaryId), SECONDARY_ID: String(secondary.id) });
  });
  afterAll(() => api?.close());

  it('lists the nodes: gl.geonodes.list()', () => {
    expect(out.listed).toEqual([
      ['primary', true, true],
      ['secondary', false, false],
    ]);
  });

  it('gives every node’s status: gl.geonodes.status()', () => {
    expect(out.status).toEqual([expect.objectContaining({ geo_node_id: primaryId, healthy: true, health_status: 'Healthy', cursor_last_event_id: null })]);
    expect(out.status[0].last_event_id).toEqual(expect.any(Number));
    expect(out.primary_status).toMatchObject({ geo_node_id: primaryId, health: 'Healthy' });
  });

  it('gets, saves and deletes a node; node.status() before it reports; current_failures() on the primary', () => {
    expect(out.one).toMatchObject({ name: 'secondary', url: 'https://secondary.example.com/', sync_object_storage: false });
    expect(out.saved).toBe(7);
    expect(out.no_status).toEqual([404, '404 Status for Geo node not found Not Found']);
    expect(out.failures).toEqual([403, '403 Forbidden - Failures can only be requested from a secondary node']);
    expect(out.after_delete).toEqual(['primary']);
  });
});
