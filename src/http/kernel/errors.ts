import type { Context, MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode, StatusCode } from 'hono/utils/http-status';
import { DomainError, type DomainErrorCode, type FieldErrors } from '../../domain/errors.js';

/**
 * The one place errors become GitLab's responses. Domain errors (src/domain/errors.ts,
 * the vocabulary every area throws) get their status, wording and body shape here:
 *
 *   404 {"message":"404 Project Not Found"}           notFound('Project')
 *   404 {"message":"404 Not found"}                   recordNotFound()  (ActiveRecord::RecordNotFound)
 *   404 {"message":"<a service's message>"}           serviceNotFound(message)
 *   403 {"message":"403 Forbidden - <reason>"}        forbidden(reason?)
 *   403 {"message":"<message>"}                       refused(message)
 *   400 {"message":"400 Bad request - <reason>"}      badRequest(reason?)
 *   400 {"message":"<a service's message>"}           serviceError(message)
 *   400 {"message":{"name":["has already been taken"]}}  invalid({ name: ['has already been taken'] })
 *   400 {"error":"name is missing, id is invalid"}    paramErrors(['name is missing', 'id is invalid'])
 *   409 {"message":"<message>"}                       conflict(message)
 *   409 {"message":["<message>", …]}               conflict([messages])
 *   409 {"message":"409 Conflict: Resource lock"}     resourceLocked()
 *   405 {"message":"405 Method Not Allowed"}          notAllowed()
 *   406 {"message":"<message>"}                       notAcceptable(message)
 *   422 {"message":"<message>"}                       unprocessable(message?)
 *   422 {"message":["<message>", …]}               unprocessable([messages])
 *   412 {"message":"412 Precondition Failed"}         preconditionFailed()
 *   304 (no body)                                     notModified()
 *   202 {"message":"202 Accepted"}                    accepted()
 *
 * `ApiError` is only for answers of the HTTP layer itself that no area says:
 * authentication's 401 and insufficient_scope, 405, an unparsable body, and status bodies
 * such as 413 and 503.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly body: Record<string, unknown>,
  ) {
    super(typeof body.message === 'string' ? body.message : JSON.stringify(body));
  }
}

/** GitLab's `unauthorized!`. */
export const unauthorized = () => new ApiError(401, { message: '401 Unauthorized' });
/** Doorkeeper's answer to a token without the endpoint's scopes. */
export const insufficientScope = (scopes: readonly string[]) =>
  new ApiError(403, {
    error: 'insufficient_scope',
    error_description: 'The request requires higher privileges than provided by the access token.',
    scope: scopes.join(' '),
  });
/** Grape: no route matches the path (a route requirement failed, or an unknown path). */
export const routeNotFound = () => new ApiError(404, { error: '404 Not Found' });
/** Grape's Formatter: a body in a media type the endpoint does not read. */
export const unsupportedMediaType = (type: string) => new ApiError(415, { error: `The provided content-type '${type}' is not supported.` });
/** Grape's 405 for a path without the method, or GitLab's `error!(message, 405)`. */
export const methodNotAllowed = (error = '405 Not Allowed') => new ApiError(405, { error });

export interface ErrorResponse {
  readonly status: StatusCode;
  /** Undefined: no body (304). */
  readonly body: unknown;
}

const STATUS: Record<DomainErrorCode, StatusCode> = {
  not_found: 404,
  forbidden: 403,
  bad_request: 400,
  invalid: 400,
  invalid_params: 400,
  conflict: 409,
  not_allowed: 405,
  not_acceptable: 406,
  unprocessable: 422,
  precondition_failed: 412,
  not_modified: 304,
  accepted: 202,
};

// ───────────────────────────── Validation renderings ─────────────────────────────

/**
 * How an endpoint answers `invalid` when it does not use GitLab's `render_validation_error!`
 * (400 `{"message":{field: [...]}}`). A route declares it with `rendersInvalid`.
 */
export type InvalidRendering = (fields: FieldErrors) => ErrorResponse;

/** GitLab's `render_api_error!("Failed to <act> #{model.errors.messages}", 400)`: "Failed to create milestone {…}". */
export const failedTo =
  (act: string): InvalidRendering =>
  (fields) => ({ status: 400, body: { message: `Failed to ${act} ${rubyHashInspect(fields)}` } });

/** GitLab's `render_api_error!("Failed to save group #{group.errors.messages}", 400)` (POST /groups). */
export const failedToSave = (model: string): InvalidRendering => failedTo(`save ${model}`);

/**
 * POST /projects: `error!(project.errors[:limit_reached], 403)` when the personal project
 * limit is reached; otherwise `render_validation_error!`, whose hash then shows the (empty)
 * `limit_reached` key the endpoint read.
 */
export const limitReachedFirst: InvalidRendering = (fields) => {
  const { limit_reached, ...others } = fields;
  if (limit_reached && limit_reached.length > 0) return { status: 403, body: { message: [...limit_reached] } };
  return { status: 400, body: { message: { ...others, limit_reached: [] } } };
};

/**
 * GitLab's `render_api_error!(record.errors.full_messages, status)`: `{"message":[…]}`, each
 * field humanized before its message as Rails does (`push_access_levels.user` → "Push access
 * levels user is not a member of the project"; `base` messages stand alone).
 */
export const fullMessages =
  (status: 400 | 422): InvalidRendering =>
  (fields) => ({
    status,
    body: {
      message: Object.entries(fields).flatMap(([field, messages]) => {
        if (field === 'base') return [...messages];
        const human = field.replace(/\./g, '_').replace(/_id$/, '').replace(/_/g, ' ');
        return messages.map((m) => `${human.charAt(0).toUpperCase()}${human.slice(1)} ${m}`);
      }),
    },
  });

const RENDERING = 'invalidRendering';

/** Route middleware: this endpoint renders `invalid` errors with `rendering`. */
export const rendersInvalid =
  (rendering: InvalidRendering): MiddlewareHandler =>
  async (c, next) => {
    c.set(RENDERING as never, rendering as never);
    await next();
  };

/** Ruby's Hash#inspect of ActiveModel errors: `{:path=>["has already been taken"]}`. */
export function rubyHashInspect(fields: FieldErrors): string {
  const str = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
  return `{${Object.entries(fields)
    .map(([field, messages]) => `:${field}=>[${messages.map(str).join(', ')}]`)
    .join(', ')}}`;
}

// ───────────────────────────── Mapping ─────────────────────────────

/** GitLab's wording of a domain error (lib/api/helpers.rb's `not_found!`, `forbidden!`, …). */
export function gitlabMessage({ code, subject, text, record }: DomainError): string {
  if (text !== undefined) return text;
  switch (code) {
    case 'not_found':
      if (record) return '404 Not found';
      return subject ? `404 ${subject} Not Found` : '404 Not Found';
    case 'forbidden':
      return subject ? `403 Forbidden - ${subject}` : '403 Forbidden';
    case 'bad_request':
      return subject ? `400 Bad request - ${subject}` : '400 Bad request';
    case 'conflict':
      return subject ? `409 Conflict: ${subject}` : '409 Conflict';
    case 'unprocessable':
      return '422 Unprocessable Entity';
    case 'not_allowed':
      return '405 Method Not Allowed';
    case 'not_acceptable':
      return '406 Not Acceptable';
    case 'precondition_failed':
      return '412 Precondition Failed';
    case 'accepted':
      return '202 Accepted';
    case 'invalid':
    case 'invalid_params':
    case 'not_modified':
      throw new Error(`a ${code} error has no message of its own`);
    default: {
      const unknown: never = code;
      throw new Error(`unknown error code ${String(unknown)}`);
    }
  }
}

/** A domain error's status and GitLab body (the endpoint's rendering of `invalid` aside). */
export function domainErrorResponse(error: DomainError, rendering?: InvalidRendering): ErrorResponse {
  const status = STATUS[error.code];
  switch (error.code) {
    case 'invalid': {
      const fields = error.fields ?? {};
      return rendering ? rendering(fields) : { status, body: { message: fields } };
    }
    case 'invalid_params':
      return { status, body: { error: (error.params ?? []).join(', ') } };
    case 'not_modified':
      return { status, body: undefined };
    case 'conflict':
    case 'unprocessable':
      return { status, body: { message: error.messages ?? gitlabMessage(error) } };
    default:
      return { status, body: { message: gitlabMessage(error) } };
  }
}

/** Any error as GitLab's response; undefined for what is not ours to answer (a 500). */
export function toErrorResponse(error: unknown, rendering?: InvalidRendering): ErrorResponse | undefined {
  if (error instanceof ApiError) return { status: error.status, body: error.body };
  if (error instanceof DomainError) return domainErrorResponse(error, rendering);
  return undefined;
}

/** The response to a thrown error (app.onError); undefined when it is not ours to answer. */
export function sendError(c: Context, error: unknown): Response | undefined {
  const mapped = toErrorResponse(error, c.get(RENDERING as never) as InvalidRendering | undefined);
  if (!mapped) return undefined;
  if (mapped.body === undefined) return c.body(null, mapped.status);
  return c.json(mapped.body, mapped.status as ContentfulStatusCode);
}

/** The response to an error that is answered, not thrown (the router's own 404 and 405). */
export const errorResponse = (c: Context, error: ApiError | DomainError): Response => sendError(c, error)!;
