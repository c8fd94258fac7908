import { Validator } from '@seriousme/openapi-schema-validator';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDocumentedDeclarations, documented, UndocumentedDeclaration } from '../../src/http/kernel/documented.js';
import { declared, optional, t } from '../../src/http/kernel/params.js';
import { APP_ROUTES } from '../support/routes.js';
import { startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
let document: any;
beforeAll(async () => {
  api = await startTestServer();
  document = (await api.get('/openapi.json', { token: null })).body;
});
afterAll(() => api.close());

/** Hono's `:name` and `:name{regex}` as OpenAPI's `{name}`, read independently of the app's own conversion. */
const template = (path: string) => {
  let out = '';
  for (let i = 0; i < path.length; ) {
    const param = /^:(\w+)/.exec(path.slice(i));
    if (!param) {
      out += path[i];
      i += 1;
      continue;
    }
    out += `{${param[1]}}`;
    i += param[0].length;
    if (path[i] === '{') {
      let depth = 0;
      for (; i < path.length; i++) {
        if (path[i] === '{') depth += 1;
        else if (path[i] === '}' && --depth === 0) break;
      }
      i += 1;
    }
  }
  return out === '/api/v4/openapi' ? '/api/v4/openapi.json' : out;
};

const operation = (method: string, path: string) => document.paths[path]?.[method];
const param = (op: any, name: string) => op.parameters.find((p: any) => p.name === name);

describe('GET /openapi.json', () => {
  it('answers anyone with the document, the same each time', async () => {
    const res = await api.get('/openapi.json', { token: null });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.body).toEqual(document);
    expect(document).toMatchObject({ openapi: '3.1.0', info: { title: expect.any(String), version: expect.any(String) }, servers: [{ url: '/' }] });
    // With a token too, and without the suffix (every path takes `.json`).
    expect((await api.get('/openapi')).body).toEqual(document);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(validator.version).toBe('3.1');
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("has exactly the app's routes: every method and path of its route table", () => {
    const routes = new Set(APP_ROUTES.map((r) => `${r.method.toLowerCase()} ${template(r.path)}`));
    const documented = new Set(Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods as object).map((method) => `${method} ${path}`)));
    expect([...documented].sort()).toEqual([...routes].sort());
    expect(routes.size).toBeGreaterThan(400);
    const ids = Object.values(document.paths).flatMap((methods: any) => Object.values(methods).map((op: any) => op.operationId));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("declares a converted route's parameters as its handler parses them", () => {
    const list = operation('get', '/api/v4/projects/{id}/milestones');
    expect(list.summary).toBe('List project milestones');
    expect(param(list, 'id')).toEqual({ name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'The ID or URL-encoded path.' });
    expect(param(list, 'state')).toEqual({ name: 'state', in: 'query', required: false, schema: { type: 'string', enum: ['active', 'closed', 'all'], default: 'all' } });
    expect(param(list, 'iids')).toMatchObject({ in: 'query', required: false, schema: { type: 'array', items: { type: 'integer' } } });
    expect(param(list, 'include_parent_milestones')).toMatchObject({ schema: { type: 'boolean', default: false } });
    expect(param(list, 'updated_before')).toMatchObject({ schema: { type: 'string', format: 'date-time' } });
    expect(list.responses['200']).toMatchObject({ headers: { 'X-Total': expect.any(Object) }, content: { 'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/Milestone' } } } } });
    expect(Object.keys(list.responses)).toEqual(['200', '400', '401', '403', '404']);

    const update = operation('put', '/api/v4/projects/{id}/milestones/{milestone_id}');
    expect(param(update, 'milestone_id').schema).toEqual({ type: 'integer' });
    const body = update.requestBody.content['application/json'].schema;
    expect(body.properties.state_event).toEqual({ type: 'string', enum: ['close', 'activate'] });
    expect(body.properties.due_date).toMatchObject({ anyOf: [{ type: 'string', format: 'date' }, { const: '' }] });
    expect(body.required).toBeUndefined();
    expect(update.requestBody.content).toHaveProperty(['application/x-www-form-urlencoded']);

    const create = operation('post', '/api/v4/projects/{id}/milestones');
    expect(create.requestBody.content['application/json'].schema.required).toEqual(['title']);
    expect(create.requestBody.required).toBe(true);
    expect(Object.keys(create.responses)).toContain('201');

    const remove = operation('delete', '/api/v4/projects/{id}/milestones/{milestone_id}');
    expect(remove.responses['204']).toEqual({ description: 'No Content' });
  });

  it("names GitLab's authentication schemes, basic for git over HTTP, none for public routes", () => {
    expect(document.components.securitySchemes).toEqual({
      private_token_header: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN' }),
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      private_token_query: expect.objectContaining({ type: 'apiKey', in: 'query', name: 'private_token' }),
      access_token_query: expect.objectContaining({ type: 'apiKey', in: 'query', name: 'access_token' }),
      basic: expect.objectContaining({ type: 'http', scheme: 'basic' }),
    });
    expect(document.security).toEqual([{ private_token_header: [] }, { bearer: [] }, { private_token_query: [] }, { access_token_query: [] }]);
    expect(operation('get', '/{repo}/info/refs').security).toEqual([{ basic: [] }, {}]);
    expect(operation('get', '/{repo}/info/refs').parameters[0]).toMatchObject({ name: 'repo', schema: { type: 'string', pattern: '^(?:.+\\.git)$' } });
    expect(operation('get', '/api/v4/openapi.json').security).toEqual([]);
    expect(operation('get', '/api/v4/projects/{id}/milestones').security).toBeUndefined();
  });

  it('documents every route: none is left with only its path and a default answer', () => {
    const undocumented = Object.entries(document.paths).flatMap(([path, methods]: [string, any]) =>
      Object.entries(methods).flatMap(([method, op]: [string, any]) => (op.responses.default ? [`${method} ${path}`] : [])),
    );
    expect(undocumented).toEqual([]);
  });

  it('describes git over HTTP with its media types, and the metrics', () => {
    const refs = operation('get', '/{repo}/info/refs');
    expect(Object.keys(refs.responses['200'].content)).toEqual(['application/x-git-upload-pack-advertisement', 'application/x-git-receive-pack-advertisement', 'text/plain']);
    expect(refs.responses['401']).toEqual({ description: expect.any(String), content: { 'text/plain': { schema: { type: 'string' } } } });
    const upload = operation('post', '/{repo}/git-upload-pack');
    expect(upload.requestBody).toEqual({ required: true, content: { 'application/x-git-upload-pack-request': { schema: { type: 'string' } } } });
    expect(Object.keys(upload.responses)).toEqual(['200', '400', '401', '403', '404', '413', '415']);
    expect(upload.responses['200'].content).toHaveProperty(['application/x-git-upload-pack-result']);
    expect(operation('post', '/{repo}/git-receive-pack').security).toEqual([{ basic: [] }, {}]);
    expect(operation('get', '/{repo}/objects/{dir}/{rest}').responses['200'].content).toHaveProperty(['application/x-git-loose-object']);
    const metrics = operation('get', '/-/metrics');
    expect(metrics).toMatchObject({ security: [], responses: { 200: { content: { 'text/plain; version=0.0.4': expect.any(Object) } }, 404: expect.any(Object) } });
  });

  it("declares a service's parameters by its slug: one body per kind", () => {
    const put = operation('put', '/api/v4/projects/{id}/services/{slug}');
    expect(param(put, 'slug').schema.enum).toEqual(expect.arrayContaining(['slack', 'jira', 'pipelines-email']));
    const bodies = put.requestBody.content['application/json'].schema.anyOf;
    expect(bodies.length).toBe(param(put, 'slug').schema.enum.length);
    const slack = bodies.find((body: any) => body.title === 'slug=slack');
    expect(slack.properties).toMatchObject({ webhook: { type: 'string' }, push_events: { type: 'boolean' } });
    expect(slack.required).toEqual(['webhook']);
    expect(put.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ProjectService' });
  });

  it('describes every entity it names field by field: types, the fields always written, no others', () => {
    const { schemas } = document.components;
    // An entity a route names without a schema in src/http/entities/schemas is only `type: object`.
    const undescribed = Object.entries(schemas).flatMap(([name, schema]: [string, any]) =>
      (schema.anyOf ?? [schema]).some((s: any) => !s.$ref && (s.properties === undefined || (name !== 'Error' && s.additionalProperties !== false))) ? [name] : [],
    );
    expect(undescribed).toEqual([]);
    expect(schemas.Milestone).toMatchObject({
      type: 'object',
      properties: { id: { type: 'integer' }, title: { type: 'string' }, description: { type: ['string', 'null'] }, due_date: { type: ['string', 'null'], format: 'date' }, created_at: { type: 'string', format: 'date-time' } },
      required: ['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'due_date', 'start_date', 'web_url'],
      additionalProperties: false,
    });
    // Nested entities by reference, and those only embedded are there too.
    expect(schemas.Issue.properties.author).toEqual({ anyOf: [{ $ref: '#/components/schemas/UserBasic' }, { type: 'null' }] });
    expect(schemas.Issue.properties.assignees).toEqual({ type: 'array', items: { $ref: '#/components/schemas/UserBasic' } });
    expect(schemas).toHaveProperty('LabelBasic');
    // Answers that depend on who asks name each entity.
    expect(operation('get', '/api/v4/users').responses['200'].content['application/json'].schema).toEqual({
      type: 'array',
      items: { anyOf: [{ $ref: '#/components/schemas/UserBasic' }, { $ref: '#/components/schemas/UserWithAdmin' }] },
    });
  });
});

describe('a documented route', () => {
  // The test servers check every request of a documented route (checkDocumentedDeclarations).
  const shape = { state: optional(t.values(['opened', 'closed'])) };
  const app = new Hono()
    .get('/same/:thing_id', documented({ summary: 'as documented', params: shape, pathIds: ['thing_id'], responses: { 200: null } }), async (c) => {
      await declared(c, { state: optional(t.values(['opened', 'closed'])) }, { pathIds: ['thing_id'] });
      return c.body(null, 200);
    })
    .get('/other', documented({ summary: 'another type', params: shape, responses: { 200: null } }), async (c) => {
      await declared(c, { state: optional(t.string()) });
      return c.body(null, 200);
    })
    .get('/more', documented({ summary: 'a parameter more', params: shape, responses: { 200: null } }), async (c) => {
      await declared(c, { ...shape, search: optional(t.string()) });
      return c.body(null, 200);
    })
    .get('/path/:thing_id', documented({ summary: 'an undocumented path integer', responses: { 200: null } }), async (c) => {
      await declared(c, {}, { pathIds: ['thing_id'] });
      return c.body(null, 200);
    })
    .onError((error, c) => c.text(error instanceof UndocumentedDeclaration ? error.message : 'other', 500));

  it('may parse only what its documentation declares, as it declares it', async () => {
    checkDocumentedDeclarations();
    const quiet = console.error;
    console.error = () => {};
    try {
      expect((await app.request('/same/1?state=opened')).status).toBe(200);
      for (const [path, message] of [
        ['/other', "GET /other parses 'state' otherwise than its documentation declares it"],
        ['/more', "GET /more parses 'search' otherwise than its documentation declares it"],
        ['/path/1', "GET /path/:thing_id declares the path integer 'thing_id', which its documentation does not"],
      ]) {
        const res = await app.request(path!);
        expect(res.status, path).toBe(500);
        expect(await res.text()).toBe(message);
      }
    } finally {
      console.error = quiet;
    }
  });
});
