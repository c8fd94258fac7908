import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import type { Context } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { watchDocumentedAnswers } from '../../src/http/kernel/documented.js';
import { openApiPath } from '../../src/http/kernel/openapi.js';
import { buildScenario, discovered, ok, plan } from '../support/round-trip-scenario.js';
import { startTestServer, type TestServer } from '../support/server.js';

/**
 * Every JSON answer of a documented route, validated against the schema the OpenAPI document
 * gives for its route and status: the writes of the import round trip's scenario
 * (test/support/round-trip-scenario.ts), the GETs its data reaches, and a few writes more for
 * the entities it does not reach. An entity that writes a field its schema does not name,
 * leaves out a required one, or changes a type fails here.
 */

let api: TestServer;
let document: any;
// The two formats the document uses, checked in full (a real date, a real time).
const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true, formats: { date: fullFormats.date, 'date-time': fullFormats['date-time'] } });
const validators = new Map<string, ValidateFunction | null>();
const failures: string[] = [];
/** The entities whose schemas real answers passed, with those they embed. */
const validated = new Set<string>();
let answers = 0;

beforeAll(async () => {
  api = await startTestServer({ externalUrl: 'http://forge.example.com' });
  document = (await api.get('/openapi.json', { token: null })).body;
  // The components as one schema's $defs, where the references inside them resolve.
  ajv.addSchema({ $id: 'openapi.json', $defs: JSON.parse(JSON.stringify(document.components.schemas).replaceAll('"#/components/schemas/', '"#/$defs/')) });
  watchDocumentedAnswers(async (c) => {
    try {
      await check(c);
    } catch (error) {
      failures.push(`${c.req.method} ${c.req.routePath}: ${String(error)}`);
    }
  });
}, 120_000);

afterAll(async () => {
  watchDocumentedAnswers(undefined);
  await api?.close();
});

/** The schema the document gives for a route's answer of this status, compiled once; null when it gives none. */
function validatorFor(method: string, routePath: string, status: number): ValidateFunction | null {
  const key = `${method} ${routePath} ${status}`;
  if (validators.has(key)) return validators.get(key)!;
  const schema = document.paths[openApiPath(routePath)]?.[method.toLowerCase()]?.responses?.[status]?.content?.['application/json']?.schema;
  const validate = schema ? ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"openapi.json#/$defs/'))) : null;
  validators.set(key, validate);
  return validate;
}

/** The entities a schema refers to, and those they embed. */
function entitiesOf(schema: unknown, found: Set<string>) {
  for (const [, name] of JSON.stringify(schema).matchAll(/"#\/components\/schemas\/(\w+)"/g)) {
    if (found.has(name!)) continue;
    found.add(name!);
    entitiesOf(document.components.schemas[name!], found);
  }
}

async function check(c: Context) {
  if (!(c.res.headers.get('content-type') ?? '').startsWith('application/json')) return;
  const { method, routePath } = c.req;
  const status = c.res.status;
  answers += 1;
  const validate = validatorFor(method, routePath, status);
  if (!validate) {
    failures.push(`${method} ${routePath} answered ${status} with JSON, which its documentation does not list`);
    return;
  }
  if (!validate(await c.res.clone().json())) {
    const errors = (validate.errors ?? []).slice(0, 4).map((e) => `${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
    failures.push(`${method} ${routePath} ${status}:\n    ${errors.join('\n    ')}`);
    return;
  }
  entitiesOf(document.paths[openApiPath(routePath)][method.toLowerCase()].responses[status], validated);
}

describe('the answers', () => {
  it('are what the OpenAPI document says they are, for every route and status the scenario reaches', async () => {
    const ids = await buildScenario(api);
    const reads = plan(api, ids, await discovered(api, ids));
    for (const read of reads) await fetch(`${api.url}${read.path}`, { headers: read.token === null ? {} : { 'PRIVATE-TOKEN': read.token } });
    await moreEntities(ids);
    await geoAndRegistry();

    expect(failures.join('\n')).toBe('');
    const routes = new Set([...validators.keys()].map((key) => key.slice(0, key.lastIndexOf(' '))));
    console.log(`openapi answers: ${answers} JSON answers of ${routes.size} routes validated`);
    expect(answers).toBeGreaterThan(250);
    // Each entity the document describes is checked against a real answer, but a Geo
    // secondary's replication failures (they need a secondary that failed to replicate).
    const unchecked = Object.keys(document.components.schemas).filter((name) => name !== 'Error' && !validated.has(name));
    expect(unchecked.sort()).toEqual(['ProjectRegistry']);
  }, 300_000);

  it('fail the check when an entity writes a field its schema does not name, or leaves one out', () => {
    const validate = ajv.compile({ $ref: 'openapi.json#/$defs/Milestone' });
    const milestone = { id: 1, iid: 1, project_id: 1, title: 'v1', description: null, state: 'active', created_at: '2026-01-01T00:00:00.000Z', updated_at: '2026-01-01T00:00:00.000Z', due_date: null, start_date: '2026-01-01', web_url: 'http://x/-/milestones/1' };
    expect(validate(milestone)).toBe(true);
    expect(validate({ ...milestone, expired: false })).toBe(false);
    const { web_url: _, ...withoutUrl } = milestone;
    expect(validate(withoutUrl)).toBe(false);
    expect(validate({ ...milestone, due_date: 'tomorrow' })).toBe(false);
  });
});

/** Writes and reads for the entities the round trip's scenario does not reach. */
async function moreEntities(ids: Awaited<ReturnType<typeof buildScenario>>) {
  const p = `/projects/${ids.project}`;
  await ok(api.post(`${p}/access_requests`, undefined, { token: ids.bobToken }));
  await api.get(`${p}/access_requests`);
  const token = await ok(api.post(`/users/${ids.alice}/impersonation_tokens`, { name: 'imp', scopes: ['api'] }));
  await api.get(`/users/${ids.alice}/impersonation_tokens/${token.id}`);
  await ok(api.post(`${p}/share`, { group_id: ids.subgroup, group_access: 30 }));
  await ok(api.post(`/groups/${ids.group}/epics/${ids.epic}/issues/${(await api.get(`${p}/issues/${ids.issue}`)).body.id}`));
  await api.get(`/groups/${ids.group}/epics/${ids.epic}/issues`);
  await ok(api.post(`${p}/feature_flags/new_ui/scopes`, { environment_scope: 'review/*', active: true, strategies: JSON.stringify([{ name: 'default', parameters: {} }]) }));
  await api.get(`${p}/feature_flag_scopes?environment=production`);
  await ok(api.put(`${p}/services/slack`, { webhook: 'https://hooks.slack.example.com/x' }), 200);
  await api.get(`${p}/services/slack`);
  await api.get(`${p}/services`);
  await api.get(`${p}/repository/files/README.md/blame?ref=master`);
}

/** A Geo primary with a secondary, and a container registry's push: on a server configured for both. */
async function geoAndRegistry() {
  const secret = 'registry-notification-secret';
  const host = 'registry.test:5050';
  const other = await startTestServer({ geo: { ...loadConfig({}).geo, nodeName: 'primary', secret: 'geo-secret-for-tests-0123456789abcdef' }, registryNotificationSecret: secret, registryHost: host });
  try {
    const primary = await ok(other.post('/geo_nodes', { name: 'primary', url: 'https://primary.example.com', primary: true }));
    await ok(other.post('/geo_nodes', { name: 'secondary', url: 'https://secondary.example.com' }));
    await other.get('/geo_nodes');
    await other.get(`/geo_nodes/${primary.id}/status`);
    await other.get('/geo_nodes/status');

    const project = await ok(other.post('/projects', { name: 'images', visibility: 'public' }));
    const digest = `sha256:${'d'.repeat(64)}`;
    const target = { mediaType: 'application/vnd.docker.distribution.manifest.v2+json', size: 527, digest, length: 527, repository: project.path_with_namespace, url: `https://${host}/v2/${project.path_with_namespace}/manifests/${digest}`, tag: 'v1' };
    const event = { id: 'push-1', timestamp: '2030-03-01T09:00:00.000Z', action: 'push', target, request: { id: 'r', addr: '10.0.0.1', host, method: 'PUT', useragent: 'docker/19.03' }, actor: { name: 'root' }, source: { addr: 'registry:5000', instanceID: 'i' } };
    const notified = await fetch(`${other.apiUrl}/container_registry_event/events`, { method: 'POST', headers: { 'content-type': 'application/vnd.docker.distribution.events.v1+json', authorization: secret }, body: JSON.stringify({ events: [event] }) });
    expect(notified.status).toBe(200);
    const [repository] = (await other.get(`/projects/${project.id}/registry/repositories?tags=true`)).body as { id: number }[];
    await other.get(`/projects/${project.id}/registry/repositories/${repository!.id}/tags`);
    await other.get(`/projects/${project.id}/registry/repositories/${repository!.id}/tags/v1`);
  } finally {
    await other.close();
  }
}
