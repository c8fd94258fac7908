import type { Context, MiddlewareHandler } from 'hono';
import { COMPOSED_HANDLER } from 'hono/utils/constants';
import type { JsonSchema, ParamDef, Shape } from './params.js';
import { watchDeclarations } from './params.js';

/**
 * A route's documentation, declared once beside its handler and placed in the route table
 * before it: `.get('/projects/:id/milestones', documented({ params: listShape, … }), async (c) => …)`.
 * The handler parses its parameters as every route does (`declared`, `declaration(…).parse`),
 * with the same shape constants the documentation names; the OpenAPI document
 * (src/http/kernel/openapi.ts) reads the documentation from the app's route table, and the
 * test servers check that a request parses only what its route documents
 * (`checkDocumentedDeclarations`).
 */
export interface RouteDoc {
  /** One line, as GitLab's `desc`. */
  readonly summary: string;
  /** The parameters the handler parses: the query's for GET and DELETE, the body's (or the query's) otherwise. */
  readonly params?: Shape;
  /**
   * Parameters that depend on a path parameter's value, in place of `params`: GitLab declares
   * one route per value (`PUT /projects/:id/services/slack`, `…/services/jira`), forgelog one
   * route whose parameters are those of the value's shape.
   */
  readonly paramsByPath?: { readonly name: string; readonly shapes: Readonly<Record<string, Shape>> };
  /** A request body that is not parameters: its media type (git's `application/x-git-upload-pack-request`). */
  readonly requestType?: string;
  /** Path parameters declared `requires :x, type: Integer` (a `Declaration`'s pathIds; the others are strings). */
  readonly pathIds?: readonly string[];
  /**
   * Who may call it: `user` (a token is required: 401 without), `optional` (anonymous callers
   * too, seeing what is public), `admin` (an administrator's token), `public` (no
   * authentication at all). Default `user`.
   */
  readonly auth?: 'user' | 'optional' | 'admin' | 'public';
  /**
   * The statuses it answers, with their bodies: an entity's name (GitLab's
   * `API::Entities::<name>`, `<name>[]` for a list, answered with pagination headers), the
   * entities it answers by who asks (`['UserBasic[]', 'UserWithAdmin[]']`), `null` for no
   * body, or a JSON Schema (with `contentMediaType` for a body that is not JSON: RAW_TEXT;
   * `mediaTypes(…)` for one of several). 400 (when it declares parameters or path integers)
   * and 401 (unless public) are added; list the other errors it answers (403, 404, 409,
   * 422…) as `'Error'`.
   */
  readonly responses: Readonly<Record<number, ResponseBody>>;
}

export type ResponseBody = null | string | readonly string[] | JsonSchema;

const DOC = Symbol('route documentation');

type DocumentedHandler = MiddlewareHandler & { readonly [DOC]: RouteDoc };

/** What each request of a documented route answers, while the declarations are checked. */
const requestDocs = new WeakMap<Context, RouteDoc>();
let checking = false;

/** Looks at each answer of a documented route once it is made: a test validating the answers against the document. */
export type AnswerWatcher = (c: Context, doc: RouteDoc) => Promise<void>;
let answerWatcher: AnswerWatcher | undefined;

/** Shows every answer of a documented route to `watcher` from now on (`undefined`: to none). */
export function watchDocumentedAnswers(watcher: AnswerWatcher | undefined) {
  answerWatcher = watcher;
}

/**
 * A route's documentation as a handler of the route table. It only passes the request on
 * (and, while declarations are checked, tells the check which route it is; while answers are
 * watched, shows the watcher the answer).
 */
export function documented(doc: RouteDoc): MiddlewareHandler {
  const handler = (c: Context, next: () => Promise<void>) => {
    if (checking) requestDocs.set(c, doc);
    if (!answerWatcher) return next();
    return next().then(() => answerWatcher?.(c, doc));
  };
  return Object.assign(handler, { [DOC]: doc }) as DocumentedHandler;
}

/** The documentation a route-table handler carries (through the wrapper `app.route()` may put around it). */
export function docOf(handler: unknown): RouteDoc | undefined {
  if (typeof handler !== 'function') return undefined;
  const own = (handler as Partial<DocumentedHandler>)[DOC];
  if (own) return own;
  const inner = (handler as { [COMPOSED_HANDLER]?: unknown })[COMPOSED_HANDLER];
  return inner === undefined ? undefined : docOf(inner);
}

const sameDef = (a: ParamDef<unknown, boolean>, b: ParamDef<unknown, boolean> | undefined) =>
  b !== undefined && a.schema === b.schema && a.required === b.required && Boolean(a.notBlank) === Boolean(b.notBlank) && Object.is(a.default, b.default);

/** Why a request's declaration is not what its route documents. */
export class UndocumentedDeclaration extends Error {
  constructor(message: string) {
    super(message);
    // The test server's log is silent and its answer a bare 500: say it where the run shows it.
    console.error(`UndocumentedDeclaration: ${message}`);
  }
}

/**
 * Makes every request of a documented route check that what its handler parses is what the
 * route documents: each parameter (name, type, required, default, allow_blank) and each path
 * integer. A difference is an error (a 500 in the test that made the request), so the
 * OpenAPI document cannot drift from the parsing. The test servers turn it on.
 */
export function checkDocumentedDeclarations() {
  checking = true;
  watchDeclarations({
    shape(c, shape) {
      const doc = requestDocs.get(c);
      if (!doc) return;
      const byPath = doc.paramsByPath;
      const value = byPath ? (c.req.param(byPath.name) ?? '') : '';
      const documentedShape = byPath ? (Object.hasOwn(byPath.shapes, value) ? byPath.shapes[value] : undefined) : doc.params;
      for (const [name, def] of Object.entries(shape)) {
        if (!sameDef(def, documentedShape?.[name])) {
          throw new UndocumentedDeclaration(`${c.req.method} ${c.req.routePath} parses '${name}' otherwise than its documentation declares it`);
        }
      }
    },
    pathId(c, name) {
      const doc = requestDocs.get(c);
      if (doc && !doc.pathIds?.includes(name)) {
        throw new UndocumentedDeclaration(`${c.req.method} ${c.req.routePath} declares the path integer '${name}', which its documentation does not`);
      }
    },
  });
}

/** What a route that resolves a scope answers besides its success: 404 when it is hidden or absent, 403 without the ability. */
export const REFUSED = { 403: 'Error', 404: 'Error' } as const satisfies RouteDoc['responses'];

/** A body that is only GitLab's message: `{"message": "202 Accepted"}`. */
export const MESSAGE = { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } as const satisfies ResponseBody;

/** A raw file's content, as the raw endpoints answer it. */
export const RAW_TEXT = { type: 'string', contentMediaType: 'text/plain' } as const satisfies ResponseBody;

/** A body that is not JSON, of one of these media types (git's answers, a refusal in plain text). */
export const mediaTypes = (...types: readonly string[]): ResponseBody => ({ anyOf: types.map((type) => ({ type: 'string', contentMediaType: type })) });
