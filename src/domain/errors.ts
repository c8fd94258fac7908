/**
 * The closed vocabulary of domain errors. One HTTP module (src/http/kernel/errors.ts)
 * turns each code into GitLab's status and body.
 */
export type DomainErrorCode =
  | 'not_found' // 404 {"message":"404 <subject> Not Found"}
  | 'forbidden' // 403 {"message":"403 Forbidden"} or the given message
  | 'conflict' // 409 {"message":"<message>"}
  | 'invalid' // 400 {"message":{"<field>":["<text>"]}}
  | 'bad_request' // 400 {"message":"<message>"}
  | 'unprocessable'; // 422 {"message":"<message>"}

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    /** For `not_found`: the resource name ("User"); for `invalid`: field → messages. */
    readonly subject?: string,
    readonly fields?: Readonly<Record<string, readonly string[]>>,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const notFound = (subject: string) => new DomainError('not_found', `404 ${subject} Not Found`, subject);
export const forbidden = (message = '403 Forbidden') => new DomainError('forbidden', message);
export const conflict = (message: string) => new DomainError('conflict', message);
export const badRequest = (message: string) => new DomainError('bad_request', message);
export const invalid = (fields: Record<string, readonly string[]>) =>
  new DomainError('invalid', Object.entries(fields).map(([f, m]) => `${f} ${m.join(', ')}`).join('; '), undefined, fields);
