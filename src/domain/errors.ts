/**
 * The one error vocabulary. Every answer GitLab gives that is not the resource itself is a
 * DomainError: a closed `code`, a structured subject, and nothing else. An area author
 * throws one of the factories below — from a decider, a command, a kernel helper or a
 * route — and never builds a body: src/http/kernel/errors.ts maps the code to the status
 * and the body's shape, in one place.
 *
 *   404 {"message":"404 Project Not Found"}           notFound('Project')
 *   404 {"message":"404 Not found"}                   recordNotFound()  (ActiveRecord::RecordNotFound)
 *   403 {"message":"403 Forbidden - <reason>"}        forbidden(reason?)
 *   400 {"message":"400 Bad request - <reason>"}      badRequest(reason?)
 *   400 {"message":"<a service's message>"}           serviceError(message)
 *   400 {"message":{"name":["has already been taken"]}}  invalid({ name: ['has already been taken'] })
 *   400 {"error":"name is missing, id is invalid"}    paramErrors(['name is missing', 'id is invalid'])
 *   409 {"message":"<message>"}                       conflict(message)
 *   409 {"message":"409 Conflict: Resource lock"}     resourceLocked()
 *   422 {"message":"<message>"}                       unprocessable(message?)
 *   412 {"message":"412 Precondition Failed"}         preconditionFailed()
 *   304 (no body)                                     notModified()
 *   202 {"message":"202 Accepted"}                    accepted()
 *
 * An endpoint that renders a failed save its own way (POST /groups' "Failed to save group
 * {…}", POST /projects' limit_reached) still throws `invalid(fields)` and declares the
 * rendering on its route (`rendersInvalid` in the HTTP module). Matching an error by its
 * message text is never needed: the code and the subject say what it is.
 *
 * The message (GitLab's wording, built from the code and the subject by `gitlabText`
 * below and nowhere else) is the Error's message, so logs and domain tests read what the
 * client reads. What is HTTP — the status, the body's shape (`message`, `error`, a field
 * hash, no body), headers — is only in the HTTP module. Answers that are not outcomes of
 * the domain or of a request's parameters (401 and insufficient_scope of authentication,
 * 405, an unparsable body, 413, 503) are the HTTP module's `ApiError`.
 */
export type DomainErrorCode =
  | 'not_found'
  | 'forbidden'
  | 'bad_request'
  | 'invalid'
  | 'invalid_params'
  | 'conflict'
  | 'unprocessable'
  | 'precondition_failed'
  | 'not_modified'
  | 'accepted';

export type FieldErrors = Readonly<Record<string, readonly string[]>>;

export interface DomainErrorDetail {
  /**
   * What GitLab's helper names: the resource of `not_found` ("Project"), the reason of
   * `forbidden` and `bad_request`, what `conflict` is about ("Resource lock").
   */
  readonly subject?: string | undefined;
  /** GitLab's own words, shown as they are: a conflict's, an unprocessable entity's, a service's. */
  readonly text?: string | undefined;
  /** `not_found` raised by a `find_by!` miss (ActiveRecord::RecordNotFound): "404 Not found". */
  readonly record?: boolean | undefined;
  /** `invalid`: field → messages, in the order the model added them. */
  readonly fields?: FieldErrors | undefined;
  /** `invalid_params`: Grape's messages ("name is missing"), in declaration order. */
  readonly params?: readonly string[] | undefined;
}

export class DomainError extends Error {
  readonly subject: string | undefined;
  readonly record: boolean;
  readonly fields: FieldErrors | undefined;
  readonly params: readonly string[] | undefined;

  constructor(
    readonly code: DomainErrorCode,
    detail: DomainErrorDetail = {},
  ) {
    super(gitlabText(code, detail));
    this.name = 'DomainError';
    this.subject = detail.subject;
    this.record = detail.record ?? false;
    this.fields = detail.fields;
    this.params = detail.params;
  }
}

/** GitLab's wording of each code (lib/api/helpers.rb's `not_found!`, `forbidden!`, …). */
function gitlabText(code: DomainErrorCode, { subject, text, record, fields, params }: DomainErrorDetail): string {
  if (text !== undefined) return text;
  switch (code) {
    case 'not_found':
      if (record) return '404 Not found';
      return subject ? `404 ${subject} Not Found` : '404 Not Found';
    case 'forbidden':
      return subject ? `403 Forbidden - ${subject}` : '403 Forbidden';
    case 'bad_request':
      return subject ? `400 Bad request - ${subject}` : '400 Bad request';
    case 'invalid':
      return Object.entries(fields ?? {})
        .map(([field, messages]) => `${field} ${messages.join(', ')}`)
        .join('; ');
    case 'invalid_params':
      return (params ?? []).join(', ');
    case 'conflict':
      return subject ? `409 Conflict: ${subject}` : '409 Conflict';
    case 'unprocessable':
      return '422 Unprocessable Entity';
    case 'precondition_failed':
      return '412 Precondition Failed';
    case 'not_modified':
      return '304 Not Modified';
    case 'accepted':
      return '202 Accepted';
    default: {
      const unknown: never = code;
      throw new Error(`unknown error code ${String(unknown)}`);
    }
  }
}

// ───────────────────────────── Factories ─────────────────────────────

/** GitLab's `not_found!(resource)`: "404 Project Not Found", or "404 Not Found" without one. */
export const notFound = (resource?: string) => new DomainError('not_found', { subject: resource });
/** A `find_by!` miss, rescued by GitLab's API as "404 Not found"; the resource is for the log only. */
export const recordNotFound = (resource?: string) => new DomainError('not_found', { subject: resource, record: true });
/** GitLab's `forbidden!(reason)`. */
export const forbidden = (reason?: string) => new DomainError('forbidden', { subject: reason });
/** GitLab's `bad_request!(reason)`. */
export const badRequest = (reason?: string) => new DomainError('bad_request', { subject: reason });
/** A service's error message, rendered as it is with 400 (`render_api_error!(result[:message], 400)`). */
export const serviceError = (message: string) => new DomainError('bad_request', { text: message });
/** Model validation errors (`render_validation_error!`): field → messages. */
export const invalid = (fields: FieldErrors) => new DomainError('invalid', { fields });
/** Grape's parameter validation errors, joined as GitLab answers them. */
export const paramErrors = (messages: readonly string[]) => new DomainError('invalid_params', { params: messages });
/** GitLab's `conflict!(message)`. */
export const conflict = (message: string) => new DomainError('conflict', { text: message });
/** A write that could not take its lock (or lost every retry to concurrent writers). */
export const resourceLocked = () => new DomainError('conflict', { subject: 'Resource lock' });
/** GitLab's `unprocessable_entity!(message)`. */
export const unprocessable = (message?: string) => new DomainError('unprocessable', { text: message });
/** GitLab's `destroy_conditionally!` when the resource changed after If-Unmodified-Since. */
export const preconditionFailed = () => new DomainError('precondition_failed');
/** GitLab's `not_modified!`: the request changes nothing (starring a starred project). */
export const notModified = () => new DomainError('not_modified');
/** GitLab's `accepted!`: the work is scheduled (a deletion). */
export const accepted = () => new DomainError('accepted');
