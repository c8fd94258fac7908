import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { DomainError } from '../../domain/errors.js';

/** An HTTP answer in GitLab's exact body, thrown from anywhere in a request. */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly body: Record<string, unknown>,
  ) {
    super(typeof body.message === 'string' ? body.message : JSON.stringify(body));
  }
}

export const unauthorized = () => new ApiError(401, { message: '401 Unauthorized' });
export const forbidden = (reason?: string) => new ApiError(403, { message: reason ? `403 Forbidden - ${reason}` : '403 Forbidden' });
export const notFound = (resource?: string) => new ApiError(404, { message: resource ? `404 ${resource} Not Found` : '404 Not Found' });
export const badRequest = (reason?: string) => new ApiError(400, { message: reason ? `400 Bad request - ${reason}` : '400 Bad request' });
export const conflict = (message: string) => new ApiError(409, { message });
/** Grape's parameter errors: `{"error":"name is missing, id is invalid"}`. */
export const paramErrors = (messages: readonly string[]) => new ApiError(400, { error: messages.join(', ') });
export const insufficientScope = (scopes: readonly string[]) =>
  new ApiError(403, {
    error: 'insufficient_scope',
    error_description: 'The request requires higher privileges than provided by the access token.',
    scope: scopes.join(' '),
  });

const DOMAIN_STATUS: Record<DomainError['code'], ContentfulStatusCode> = {
  not_found: 404,
  forbidden: 403,
  conflict: 409,
  invalid: 400,
  bad_request: 400,
  unprocessable: 422,
};

/** The one place errors become GitLab responses. */
export function toErrorResponse(error: unknown): { status: ContentfulStatusCode; body: Record<string, unknown> } | undefined {
  if (error instanceof ApiError) return { status: error.status, body: error.body };
  if (error instanceof DomainError) {
    const status = DOMAIN_STATUS[error.code];
    if (error.code === 'invalid' && error.fields) return { status, body: { message: error.fields } };
    return { status, body: { message: error.message } };
  }
  return undefined;
}

export function sendError(c: Context, error: unknown) {
  const mapped = toErrorResponse(error);
  if (!mapped) return undefined;
  return c.json(mapped.body, mapped.status);
}
