import type { RouterRoute } from 'hono/types';
import { VERSION } from '../../version.js';
import { ENTITY_SCHEMAS } from '../entities/schemas/index.js';
import { docOf, type ResponseBody, type RouteDoc } from './documented.js';
import { paramJsonSchema, type JsonSchema, type ParamDef } from './params.js';

/**
 * The OpenAPI 3.1 document of the app, made from its route table: every method and path the
 * router serves is there (none can be missing), with what each route's documentation
 * (src/http/kernel/documented.ts) declares — the same shapes its handler parses. A route not
 * documented yet still appears, with its path parameters.
 */
export function openApiDocument(routes: readonly RouterRoute[]): JsonSchema {
  const operations = new Map<string, { method: string; path: string; doc: RouteDoc | undefined }>();
  for (const route of routes) {
    if (route.method === 'ALL') continue;
    const key = `${route.method} ${route.path}`;
    const doc = docOf(route.handler);
    const known = operations.get(key);
    if (!known) operations.set(key, { method: route.method, path: route.path, doc });
    else if (doc) known.doc = doc;
  }
  const paths: Record<string, Record<string, unknown>> = {};
  const entities = new Set<string>();
  const ids = new Set<string>();
  for (const { method, path, doc } of operations.values()) {
    const template = openApiPath(path);
    const op = operation(method, path, doc, entities);
    // `/Users` and `/Users/` (SCIM) are two routes of one name.
    let id = op.operationId as string;
    for (let n = 2; ids.has(id); n++) id = `${op.operationId as string}${n}`;
    ids.add(id);
    (paths[template] ??= {})[method.toLowerCase()] = { ...op, operationId: id };
  }
  const schemas = entitySchemas(entities);
  return {
    openapi: '3.1.0',
    info: {
      title: 'forgelog: GitLab API v4',
      version: VERSION,
      description:
        "GitLab's REST API v4 (12.x), served by forgelog. Authenticate with a personal access token in the PRIVATE-TOKEN header, " +
        'as `Authorization: Bearer <token>`, or in the `private_token` (or `access_token`) parameter; git over HTTP takes the token as a basic password. ' +
        'Administrators may act as another user with the Sudo header or parameter. Every path also answers with a `.json` suffix.',
    },
    servers: [{ url: '/' }],
    security: API_SECURITY,
    tags: [...new Set(Object.values(paths).flatMap((methods) => Object.values(methods).flatMap((op) => (op as { tags: string[] }).tags)))]
      .sort()
      .map((name) => ({ name })),
    paths: Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    components: { schemas, securitySchemes: SECURITY_SCHEMES },
  };
}

/**
 * The schemas of the entities the answers name, and of those they embed (`$ref`), by name. An
 * entity without one is only named (`type: object`), which test/http/openapi.test.ts refuses.
 */
function entitySchemas(named: ReadonlySet<string>): Record<string, JsonSchema> {
  const found: Record<string, JsonSchema> = { Error: ERROR };
  const pending = [...named];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (found[name]) continue;
    const schema = ENTITY_SCHEMAS[name] ?? { type: 'object', description: `GitLab's API::Entities::${name}, not described yet (src/http/entities/schemas).` };
    found[name] = schema;
    for (const ref of JSON.stringify(schema).matchAll(/"#\/components\/schemas\/(\w+)"/g)) pending.push(ref[1]!);
  }
  return Object.fromEntries(Object.entries(found).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

const SECURITY_SCHEMES = {
  private_token_header: { type: 'apiKey', in: 'header', name: 'PRIVATE-TOKEN', description: 'A personal access token.' },
  bearer: { type: 'http', scheme: 'bearer', description: 'A personal access token as `Authorization: Bearer <token>`.' },
  private_token_query: { type: 'apiKey', in: 'query', name: 'private_token', description: 'A personal access token in the query (or the body).' },
  access_token_query: { type: 'apiKey', in: 'query', name: 'access_token', description: 'The same, under the name OAuth clients use.' },
  basic: { type: 'http', scheme: 'basic', description: 'Git over HTTP: a username and a personal access token (or the password) as its password.' },
};
const API_SECURITY = [{ private_token_header: [] }, { bearer: [] }, { private_token_query: [] }, { access_token_query: [] }];
const GIT_SECURITY = [{ basic: [] }, {}];

/** GitLab's error bodies: `{"message": "404 Project Not Found"}`, `{"message": {"name": ["has already been taken"]}}`, `{"error": "name is missing"}`. */
const ERROR: JsonSchema = {
  type: 'object',
  description: "GitLab's error body: `message` (a text, or each field's errors), or `error` for a parameter that does not parse.",
  properties: {
    message: { anyOf: [{ type: 'string' }, { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } }] },
    error: { type: 'string' },
  },
};

/** Hono's `:name` and `:name{regex}` as OpenAPI's `{name}`; `/api/v4/openapi` is served (and documented) with its `.json`. */
export function openApiPath(path: string): string {
  const template = templateParams(path)
    .reduce((out, param) => out.replace(param.source, `{${param.name}}`), path);
  return template === '/api/v4/openapi' ? '/api/v4/openapi.json' : template;
}

interface TemplateParam {
  readonly name: string;
  /** As written in the Hono path, `:name` or `:name{regex}`. */
  readonly source: string;
  readonly pattern?: string;
}

/** The path's parameters, a constraint read to its matching brace (it may hold `{2}`). */
function templateParams(path: string): TemplateParam[] {
  const params: TemplateParam[] = [];
  for (let i = path.indexOf(':'); i !== -1; i = path.indexOf(':', i)) {
    const name = /^:(\w+)/.exec(path.slice(i))?.[1];
    if (!name) {
      i += 1;
      continue;
    }
    let end = i + 1 + name.length;
    let pattern: string | undefined;
    if (path[end] === '{') {
      let depth = 0;
      const start = end + 1;
      for (; end < path.length; end++) {
        if (path[end] === '{') depth += 1;
        else if (path[end] === '}' && --depth === 0) break;
      }
      pattern = path.slice(start, end);
      end += 1;
    }
    params.push({ name, source: path.slice(i, end), ...(pattern === undefined ? {} : { pattern }) });
    i = end;
  }
  return params;
}

/** The area a path belongs to: its first word after the scope (`/projects/:id/milestones/…` → milestones). */
function tagOf(path: string): string {
  const words = path
    .replace(/^\/api\/v4\//, '/')
    .split('/')
    .filter((part) => part !== '' && part !== '-' && !part.startsWith(':') && !part.includes('{'));
  if (words.length === 0) return 'git';
  const [first, second] = words;
  if (first === 'api') return words[2] ?? 'api';
  if ((first === 'projects' || first === 'groups' || first === 'users' || first === 'admin') && second) return second;
  return first!;
}

const isGit = (path: string) => path.startsWith('/:repo{');
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH']);

function operation(method: string, path: string, doc: RouteDoc | undefined, entities: Set<string>): Record<string, unknown> {
  const parameters: Record<string, unknown>[] = templateParams(path).map((param) => ({
    name: param.name,
    in: 'path',
    required: true,
    schema: doc?.pathIds?.includes(param.name)
      ? { type: 'integer' }
      : doc?.paramsByPath?.name === param.name
        ? { type: 'string', enum: Object.keys(doc.paramsByPath.shapes) }
        : param.pattern === undefined
        ? { type: 'string' }
        : { type: 'string', pattern: `^(?:${param.pattern})$` },
    ...(param.name === 'id' && /^\/api\/v4\/(projects|groups)\//.test(path) ? { description: 'The ID or URL-encoded path.' } : {}),
  }));
  const op: Record<string, unknown> = {
    operationId: operationId(method, path),
    summary: doc?.summary ?? `${method} ${openApiPath(path)}`,
    tags: [tagOf(path)],
  };
  const shape = Object.entries(doc?.params ?? {});
  let requestBody: Record<string, unknown> | undefined;
  if (doc?.requestType) {
    requestBody = { required: true, content: { [doc.requestType]: { schema: { type: 'string' } } } };
  } else if (doc?.paramsByPath) {
    // One body per value of the path parameter, each named by it.
    const { name, shapes } = doc.paramsByPath;
    const bodies = Object.entries(shapes).map(([value, each]) => ({ title: `${name}=${value}`, ...bodySchema(Object.entries(each)) }));
    const schema = { anyOf: bodies };
    requestBody = { required: bodies.every((body) => 'required' in body), content: Object.fromEntries(FORMS.map((type) => [type, { schema }])) };
  } else if (shape.length > 0 && BODY_METHODS.has(method)) {
    const schema = bodySchema(shape);
    const forms = shape.some(([, def]) => paramJsonSchema(def).contentMediaType !== undefined) ? ['multipart/form-data'] : FORMS;
    requestBody = { required: 'required' in schema, content: Object.fromEntries(forms.map((type) => [type, { schema }])) };
  } else {
    for (const [name, def] of shape) {
      parameters.push({ name, in: 'query', required: def.required && def.default === undefined, schema: paramJsonSchema(def) });
    }
  }
  if (parameters.length > 0) op.parameters = parameters;
  if (requestBody) op.requestBody = requestBody;
  if (!doc) {
    op.description = 'Not documented in detail yet: its parameters and answers are those of the GitLab endpoint it serves.';
    op.responses = { default: { description: 'The answer' } };
  } else {
    const responses: Record<string, unknown> = {};
    for (const [status, body] of Object.entries(doc.responses)) responses[status] = response(Number(status), body, entities);
    if ((shape.length > 0 || doc.paramsByPath || (doc.pathIds?.length ?? 0) > 0) && !responses['400']) responses['400'] = response(400, 'Error', entities);
    if (doc.auth !== 'public' && !responses['401']) responses['401'] = response(401, 'Error', entities);
    op.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
    if (doc.auth === 'admin') op.description = 'Administrators only.';
  }
  if (isGit(path)) op.security = GIT_SECURITY;
  else if (!path.startsWith('/api/') || doc?.auth === 'public') op.security = [];
  else if (doc?.auth === 'optional') op.security = [...API_SECURITY, {}];
  return op;
}

const FORMS = ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'];

/** A body of these parameters: each with its schema, the required ones without a default listed. */
function bodySchema(shape: readonly (readonly [string, ParamDef<unknown, boolean>])[]): JsonSchema {
  const required = shape.filter(([, def]) => def.required && def.default === undefined).map(([name]) => name);
  return { type: 'object', properties: Object.fromEntries(shape.map(([name, def]) => [name, paramJsonSchema(def)])), ...(required.length > 0 ? { required } : {}) };
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  304: 'Not Modified',
  400: 'Bad Request: a parameter is missing or does not parse',
  401: 'Unauthorized: no valid token',
  403: 'Forbidden',
  404: 'Not Found (also what a private resource of someone else answers)',
  405: 'Method Not Allowed',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  503: 'Service Unavailable',
};

function response(status: number, body: ResponseBody, entities: Set<string>): Record<string, unknown> {
  const description = STATUS_TEXT[status] ?? String(status);
  if (body === null) return { description };
  let schema: JsonSchema;
  let list = false;
  if (typeof body === 'string' || Array.isArray(body)) {
    const names: readonly string[] = typeof body === 'string' ? [body] : body;
    list = names.every((name) => name.endsWith('[]'));
    if (!list && names.some((name) => name.endsWith('[]'))) throw new Error(`answers ${names.join(', ')}: a list and a single entity`);
    const refs = names.map((name) => {
      const entity = list ? name.slice(0, -2) : name;
      entities.add(entity);
      return { $ref: `#/components/schemas/${entity}` };
    });
    const one = refs.length === 1 ? refs[0]! : { anyOf: refs };
    schema = list ? { type: 'array', items: one } : one;
  } else {
    // Not JSON: `{ type: 'string', contentMediaType: 'text/plain' }` is a text/plain body; mediaTypes(…) one of several.
    const alternatives = ((body as JsonSchema).anyOf as JsonSchema[] | undefined) ?? [body as JsonSchema];
    const media = alternatives.map((alternative) => alternative.contentMediaType);
    if (media.every((type) => typeof type === 'string')) return { description, content: Object.fromEntries(media.map((type) => [type, { schema: { type: 'string' } }])) };
    schema = body as JsonSchema;
  }
  return {
    description,
    ...(list ? { headers: PAGINATION_HEADERS } : {}),
    content: { 'application/json': { schema } },
  };
}

const PAGINATION_HEADERS = Object.fromEntries(
  ['X-Page', 'X-Per-Page', 'X-Next-Page', 'X-Prev-Page', 'X-Total', 'X-Total-Pages', 'Link'].map((name) => [name, { schema: { type: 'string' } }]),
);

/** `GET /api/v4/projects/:id/milestones` → `getProjectsIdMilestones`: unique per method and path. */
function operationId(method: string, path: string): string {
  const words = path
    .replace(/^\/api\/v4/, '')
    .replace(/\{[^/]*\}/g, '')
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word !== '');
  return method.toLowerCase() + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
}
