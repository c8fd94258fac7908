import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import {
  DomainError,
  type DomainErrorCode,
  accepted,
  badRequest,
  conflict,
  notAcceptable,
  notAllowed,
  forbidden,
  invalid,
  notFound,
  notModified,
  paramErrors,
  preconditionFailed,
  recordNotFound,
  refused,
  resourceLocked,
  serviceError,
  unprocessable,
} from '../../src/domain/errors.js';
import {
  ApiError,
  errorResponse,
  failedToSave,
  fullMessages,
  insufficientScope,
  limitReachedFirst,
  methodNotAllowed,
  rendersInvalid,
  routeNotFound,
  sendError,
  toErrorResponse,
  unauthorized,
} from '../../src/http/kernel/errors.js';

type Row = readonly [DomainError, number, unknown];

/** Every code of the vocabulary, each form of it, and GitLab's status and body for it. */
const VOCABULARY = {
  not_found: [
    [notFound('Project'), 404, { message: '404 Project Not Found' }],
    [notFound("User with ID or username 'x'"), 404, { message: "404 User with ID or username 'x' Not Found" }],
    [notFound(), 404, { message: '404 Not Found' }],
    [recordNotFound(), 404, { message: '404 Not found' }],
    [recordNotFound('Custom Attribute'), 404, { message: '404 Not found' }],
  ],
  forbidden: [
    [forbidden(), 403, { message: '403 Forbidden' }],
    [forbidden('Your account has been blocked.'), 403, { message: '403 Forbidden - Your account has been blocked.' }],
    [refused("Feature 'Code Owner Approval Required' is not enabled"), 403, { message: "Feature 'Code Owner Approval Required' is not enabled" }],
  ],
  bad_request: [
    [badRequest(), 400, { message: '400 Bad request' }],
    [badRequest('Token already revoked'), 400, { message: '400 Bad request - Token already revoked' }],
    [serviceError('Could not set the default branch'), 400, { message: 'Could not set the default branch' }],
  ],
  invalid: [
    [invalid({ name: ['has already been taken'] }), 400, { message: { name: ['has already been taken'] } }],
    [
      invalid({ name: ["can't be blank"], path: ["can't be blank", 'is too short'] }),
      400,
      { message: { name: ["can't be blank"], path: ["can't be blank", 'is too short'] } },
    ],
  ],
  invalid_params: [
    [paramErrors(['name is missing']), 400, { error: 'name is missing' }],
    [paramErrors(['name is missing', 'user_id is invalid']), 400, { error: 'name is missing, user_id is invalid' }],
  ],
  conflict: [
    [conflict('Member already exists'), 409, { message: 'Member already exists' }],
    [resourceLocked(), 409, { message: '409 Conflict: Resource lock' }],
    [conflict(['Another open merge request already exists for this source branch: !1']), 409, { message: ['Another open merge request already exists for this source branch: !1'] }],
  ],
  not_allowed: [[notAllowed(), 405, { message: '405 Method Not Allowed' }]],
  not_acceptable: [[notAcceptable('Branch cannot be merged'), 406, { message: 'Branch cannot be merged' }]],
  unprocessable: [
    [unprocessable('Branch already exists'), 422, { message: 'Branch already exists' }],
    [unprocessable(), 422, { message: '422 Unprocessable Entity' }],
  ],
  precondition_failed: [[preconditionFailed(), 412, { message: '412 Precondition Failed' }]],
  not_modified: [[notModified(), 304, undefined]],
  accepted: [[accepted(), 202, { message: '202 Accepted' }]],
} satisfies Record<DomainErrorCode, readonly Row[]>;

describe('the error vocabulary', () => {
  for (const [code, rows] of Object.entries(VOCABULARY) as [DomainErrorCode, readonly Row[]][]) {
    it(`maps ${code} to GitLab's status and body`, () => {
      for (const [error, status, body] of rows) {
        expect(error).toBeInstanceOf(DomainError);
        expect(error.code).toBe(code);
        expect(toErrorResponse(error)).toEqual({ status, body });
      }
    });
  }

  it('keeps the structured detail on the error, and no HTTP in its message', () => {
    expect(notFound('Project')).toMatchObject({ code: 'not_found', subject: 'Project', record: false, message: 'not_found: Project' });
    expect(recordNotFound('Custom Attribute')).toMatchObject({ code: 'not_found', subject: 'Custom Attribute', record: true, message: 'not_found (record): Custom Attribute' });
    expect(conflict('Member already exists')).toMatchObject({ code: 'conflict', text: 'Member already exists', message: 'conflict: Member already exists' });
    expect(invalid({ access_level: ['is not included in the list'] })).toMatchObject({
      fields: { access_level: ['is not included in the list'] },
      message: 'invalid: {"access_level":["is not included in the list"]}',
    });
    expect(paramErrors(['a is missing', 'b is invalid'])).toMatchObject({ params: ['a is missing', 'b is invalid'], message: 'invalid_params: a is missing, b is invalid' });
  });
});

describe('endpoint renderings of invalid', () => {
  it("render_api_error!(record.errors.full_messages, 422): each field humanized before its messages, base alone", () => {
    expect(toErrorResponse(invalid({ 'push_access_levels.user_id': ['is not a member of the project'], base: ['Something is wrong'] }), fullMessages(422))).toEqual({
      status: 422,
      body: { message: ['Push access levels user is not a member of the project', 'Something is wrong'] },
    });
  });

  it("POST /groups: GitLab's 'Failed to save group' with the errors as Ruby inspects them", () => {
    expect(toErrorResponse(invalid({ path: ['has already been taken'] }), failedToSave('group'))).toEqual({
      status: 400,
      body: { message: 'Failed to save group {:path=>["has already been taken"]}' },
    });
    expect(toErrorResponse(invalid({ name: ["can't be blank"], path: ['say "hi"\\'] }), failedToSave('group'))).toEqual({
      status: 400,
      body: { message: 'Failed to save group {:name=>["can\'t be blank"], :path=>["say \\"hi\\"\\\\"]}' },
    });
  });

  it('POST /projects: the personal project limit is a 403 list, other errors carry an empty limit_reached', () => {
    const limit = 'Your project limit is 2 projects! Please contact your administrator to increase it';
    expect(toErrorResponse(invalid({ name: ['has already been taken'], limit_reached: [limit] }), limitReachedFirst)).toEqual({ status: 403, body: { message: [limit] } });
    expect(toErrorResponse(invalid({ path: ['has already been taken'] }), limitReachedFirst)).toEqual({
      status: 400,
      body: { message: { path: ['has already been taken'], limit_reached: [] } },
    });
  });

  it('leave every other code alone', () => {
    expect(toErrorResponse(notFound('Group'), failedToSave('group'))).toEqual({ status: 404, body: { message: '404 Group Not Found' } });
    expect(toErrorResponse(paramErrors(['name is missing']), limitReachedFirst)).toEqual({ status: 400, body: { error: 'name is missing' } });
  });
});

describe('answers of the HTTP layer itself', () => {
  it('are passed as they are', () => {
    expect(toErrorResponse(unauthorized())).toEqual({ status: 401, body: { message: '401 Unauthorized' } });
    expect(toErrorResponse(insufficientScope(['api', 'read_user']))).toEqual({
      status: 403,
      body: { error: 'insufficient_scope', error_description: 'The request requires higher privileges than provided by the access token.', scope: 'api read_user' },
    });
    expect(toErrorResponse(routeNotFound())).toEqual({ status: 404, body: { error: '404 Not Found' } });
    expect(toErrorResponse(methodNotAllowed())).toEqual({ status: 405, body: { error: '405 Not Allowed' } });
    expect(toErrorResponse(new ApiError(413, { message: '413 Request Entity Too Large' }))).toEqual({ status: 413, body: { message: '413 Request Entity Too Large' } });
  });

  it('leave anything else to the 500 handler', () => {
    expect(toErrorResponse(new Error('boom'))).toBeUndefined();
    expect(toErrorResponse('boom')).toBeUndefined();
  });
});

describe('over HTTP', () => {
  const app = new Hono()
    .get('/gone', () => {
      throw notFound('Project');
    })
    .post('/star', () => {
      throw notModified();
    })
    .post('/groups', rendersInvalid(failedToSave('group')), () => {
      throw invalid({ path: ['has already been taken'] });
    })
    .put('/groups', () => {
      throw invalid({ path: ['has already been taken'] });
    })
    .get('/nothing', (c) => errorResponse(c, routeNotFound()));
  app.onError((error, c) => sendError(c, error) ?? c.json({ message: '500 Internal Server Error' }, 500));

  it('answers JSON bodies, none for 304, and the rendering only where a route declares it', async () => {
    const gone = await app.request('/gone');
    expect(gone.status).toBe(404);
    expect(gone.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await gone.json()).toEqual({ message: '404 Project Not Found' });

    const star = await app.request('/star', { method: 'POST' });
    expect(star.status).toBe(304);
    expect(await star.text()).toBe('');

    const created = await app.request('/groups', { method: 'POST' });
    expect(created.status).toBe(400);
    expect(await created.text()).toBe('{"message":"Failed to save group {:path=>[\\"has already been taken\\"]}"}');

    const updated = await app.request('/groups', { method: 'PUT' });
    expect(updated.status).toBe(400);
    expect(await updated.json()).toEqual({ message: { path: ['has already been taken'] } });

    const nothing = await app.request('/nothing');
    expect(nothing.status).toBe(404);
    expect(await nothing.json()).toEqual({ error: '404 Not Found' });
  });
});
