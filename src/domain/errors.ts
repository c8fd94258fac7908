/**
 * The one error vocabulary. Every answer GitLab gives that is not the resource itself is a
 * DomainError: a closed `code`, a structured detail, and nothing else. An area author
 * throws one of the factories below (named after the GitLab helper they stand for) from a
 * decider, a command, a kernel helper or a route, and never builds a body.
 *
 * Nothing here is HTTP. The status, GitLab's wording ("404 Project Not Found") and the
 * body's shape (`message`, `error`, a field hash, no body) are built from the code and the
 * detail in src/http/kernel/errors.ts, whose table shows each factory's answer on the wire.
 * The Error's own message names the code and the subject, for logs; domain tests assert
 * the code and the detail.
 *
 * An endpoint that renders a failed save its own way (POST /groups' "Failed to save group
 * {…}", POST /projects' limit_reached) still throws `invalid(fields)` and declares the
 * rendering on its route (`rendersInvalid` in the HTTP module). Matching an error by its
 * message text is never needed: the code and the detail say what it is. Answers that are
 * not outcomes of the domain or of a request's parameters (401 and insufficient_scope of
 * authentication, 405, an unparsable body, 413, 503) are the HTTP module's `ApiError`.
 */
export type DomainErrorCode =
  | 'not_found'
  | 'forbidden'
  | 'bad_request'
  | 'invalid'
  | 'invalid_params'
  | 'conflict'
  | 'not_allowed'
  | 'not_acceptable'
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
  /** `conflict!(errors)` with a model's error list: the messages, answered as a JSON array. */
  readonly messages?: readonly string[] | undefined;
}

export class DomainError extends Error {
  readonly subject: string | undefined;
  readonly text: string | undefined;
  readonly record: boolean;
  readonly fields: FieldErrors | undefined;
  readonly params: readonly string[] | undefined;
  readonly messages: readonly string[] | undefined;

  constructor(
    readonly code: DomainErrorCode,
    detail: DomainErrorDetail = {},
  ) {
    super(describe(code, detail));
    this.name = 'DomainError';
    this.subject = detail.subject;
    this.text = detail.text;
    this.record = detail.record ?? false;
    this.fields = detail.fields;
    this.params = detail.params;
    this.messages = detail.messages;
  }
}

/** What the error says in a log line or a failed test: its code and subject, no HTTP. */
function describe(code: DomainErrorCode, { subject, text, record, fields, params, messages }: DomainErrorDetail): string {
  const said = text ?? subject ?? (fields ? JSON.stringify(fields) : (params ?? messages)?.join(', '));
  return `${code}${record ? ' (record)' : ''}${said === undefined ? '' : `: ${said}`}`;
}

// ───────────────────────────── Factories ─────────────────────────────

/** GitLab's `not_found!(resource)`; the resource is optional. */
export const notFound = (resource?: string) => new DomainError('not_found', { subject: resource });
/** A `find_by!` miss (ActiveRecord::RecordNotFound, answered without the resource's name); the resource is for the log only. */
export const recordNotFound = (resource?: string) => new DomainError('not_found', { subject: resource, record: true });
/** A service's 404 rendered as it is (`render_api_error!(result[:message], 404)`): `{"message":"Not Found"}`. */
export const serviceNotFound = (message: string) => new DomainError('not_found', { text: message });
/** GitLab's `forbidden!(reason)`. */
export const forbidden = (reason?: string) => new DomainError('forbidden', { subject: reason });
/** GitLab's `render_api_error!(message, 403)`: a refusal in GitLab's own words (a feature not licensed). */
export const refused = (message: string) => new DomainError('forbidden', { text: message });
/** GitLab's `bad_request!(reason)`. */
export const badRequest = (reason?: string) => new DomainError('bad_request', { subject: reason });
/** A service's error message, rendered as it is with 400 (`render_api_error!(result[:message], 400)`). */
export const serviceError = (message: string) => new DomainError('bad_request', { text: message });
/** Model validation errors (`render_validation_error!`): field → messages. */
export const invalid = (fields: FieldErrors) => new DomainError('invalid', { fields });
/** Grape's parameter validation errors, joined as GitLab answers them. */
export const paramErrors = (messages: readonly string[]) => new DomainError('invalid_params', { params: messages });
/** GitLab's `conflict!(message)`; a list of messages (a model's errors) is answered as an array. */
export const conflict = (message: string | readonly string[]) =>
  typeof message === 'string' ? new DomainError('conflict', { text: message }) : new DomainError('conflict', { messages: message });
/** GitLab's `not_allowed!`: the resource is not in a state that allows it (merging a closed merge request). */
export const notAllowed = () => new DomainError('not_allowed');
/** GitLab's `render_api_error!(message, 406)`: "Branch cannot be merged". */
export const notAcceptable = (message: string) => new DomainError('not_acceptable', { text: message });
/** A write that could not take its lock (or lost every retry to concurrent writers). */
export const resourceLocked = () => new DomainError('conflict', { subject: 'Resource lock' });
/** GitLab's `unprocessable_entity!(message)`; a list of messages (`error!(model.errors[:attr], 422)`) is answered as an array. */
export const unprocessable = (message?: string | readonly string[]) =>
  typeof message === 'object' ? new DomainError('unprocessable', { messages: message }) : new DomainError('unprocessable', { text: message });
/** GitLab's `destroy_conditionally!` when the resource changed after If-Unmodified-Since. */
export const preconditionFailed = () => new DomainError('precondition_failed');
/** GitLab's `not_modified!`: the request changes nothing (starring a starred project). */
export const notModified = () => new DomainError('not_modified');
/** GitLab's `accepted!`: the work is scheduled (a deletion). */
export const accepted = () => new DomainError('accepted');
