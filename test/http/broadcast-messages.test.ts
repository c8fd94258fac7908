import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { broadcastMessagesProjector } from '../../src/projections/broadcast-messages/projector.js';
import { permissionMatrix } from '../support/matrix.js';
import { expectReplayEquivalence } from '../support/replay.js';
import { createGroup } from '../support/fixtures.js';
import { createCallers, grantRoles, type Callers, type Role } from '../support/roles.js';
import { startTestServer, type TestServer } from '../support/server.js';

const T0 = new Date('2026-07-02T10:11:12.000Z');
const HOUR = 60 * 60 * 1000;
const at = (ms: number) => new Date(T0.getTime() + ms).toISOString();

let api: TestServer;
/** The command clock of the server: tests move it to see `active` change. */
let clock = T0;
let callers: Callers;

beforeAll(async () => {
  api = await startTestServer({}, { now: () => clock });
  callers = await createCallers(api);
  // Member roles on a group: no role of a group or project opens the admin area.
  const group = await createGroup(api, { token: callers.owner.token!, visibility: 'private' });
  await grantRoles(api, callers, { groups: group.id });
});
afterAll(() => api.close());

const KEYS = ['id', 'message', 'starts_at', 'ends_at', 'color', 'font', 'active', 'target_path'];
const NOT_FOUND = { message: '404 Not found' };

async function create(body: Record<string, unknown> = {}) {
  const res = await api.post('/broadcast_messages', { message: 'Maintenance tonight', ...body });
  expect(res.status, res.text).toBe(201);
  return res.body;
}

describe('POST /broadcast_messages', () => {
  it('creates a message with GitLab’s defaults: now, now + 1 hour, #E75E40 on #FFFFFF', async () => {
    const res = await api.post('/broadcast_messages', { message: 'Test message' });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body)).toEqual(KEYS);
    expect(res.body).toEqual({
      id: expect.any(Number),
      message: 'Test message',
      starts_at: '2026-07-02T10:11:12.000Z',
      ends_at: '2026-07-02T11:11:12.000Z',
      color: '#E75E40',
      font: '#FFFFFF',
      active: true,
      target_path: null,
    });
    expect((await api.get(`/broadcast_messages/${res.body.id}`)).body).toEqual(res.body);
    const events = await api.events(`broadcast-message-${res.body.id}`);
    expect(events).toEqual([
      {
        type: 'BroadcastMessageCreated',
        data: { id: res.body.id, message: 'Test message', starts_at: res.body.starts_at, ends_at: res.body.ends_at, color: '#E75E40', font: '#FFFFFF', target_path: null },
        metadata: expect.objectContaining({ actor_id: 1 }),
      },
    ]);
  });

  it('takes custom times, colours and a target path, as JSON or a form', async () => {
    const body = await create({ starts_at: '2030-01-01T00:00:00Z', ends_at: '2030-01-02T00:00:00+02:00', color: '#000000', font: '#cecece', target_path: '*/welcome' });
    expect(body).toMatchObject({ starts_at: '2030-01-01T00:00:00.000Z', ends_at: '2030-01-01T22:00:00.000Z', color: '#000000', font: '#cecece', target_path: '*/welcome', active: false });
    const form = await api.post('/broadcast_messages', undefined, { form: { message: 'Form', color: '#abc', font: '', starts_at: '' } });
    expect(form.status).toBe(201);
    expect(form.body).toMatchObject({ message: 'Form', color: '#abc', font: '', starts_at: T0.toISOString(), active: true });
  });

  it('ids increase', async () => {
    const [a, b] = [await create(), await create()];
    expect(b.id).toBeGreaterThan(a.id);
  });

  it.each<[string, Record<string, unknown>, unknown]>([
    ['without message', { color: '#fff' }, { error: 'message is missing' }],
    ['with an unparsable starts_at', { message: 'x', starts_at: 'soon' }, { error: 'starts_at is invalid' }],
    ['with an unparsable ends_at', { message: 'x', ends_at: '2030-02-30T00:00:00Z' }, { error: 'ends_at is invalid' }],
    ['with a blank message', { message: '  ' }, { message: { message: ["can't be blank"] } }],
    ['with a bad color', { message: 'x', color: 'red' }, { message: { color: ['must be a valid color code'] } }],
    ['with a bad font', { message: 'x', font: '#12' }, { message: { font: ['must be a valid color code'] } }],
    ['with both', { message: 'x', color: '#ggg', font: 'fff' }, { message: { color: ['must be a valid color code'], font: ['must be a valid color code'] } }],
  ])('is 400 %s, and creates nothing', async (_name, body, expected) => {
    const before = (await api.get('/broadcast_messages', { query: { per_page: 1 } })).headers.get('x-total');
    const res = await api.post('/broadcast_messages', body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(expected);
    expect((await api.get('/broadcast_messages', { query: { per_page: 1 } })).headers.get('x-total')).toBe(before);
  });
});

describe('GET /broadcast_messages', () => {
  it('lists every message, newest id first, paginated', async () => {
    const [a, b, c] = [await create({ message: 'a' }), await create({ message: 'b' }), await create({ message: 'c' })];
    const res = await api.get('/broadcast_messages', { query: { per_page: 100 } });
    expect(res.status).toBe(200);
    const ids = res.body.map((m: any) => m.id);
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
    expect(ids.slice(0, 3)).toEqual([c.id, b.id, a.id]);
    expect(res.body[0]).toEqual(c);

    const page = await api.get('/broadcast_messages', { query: { per_page: 1, page: 2 } });
    expect(page.body.map((m: any) => m.id)).toEqual([b.id]);
    expect(page.headers.get('x-total')).toBe(String(ids.length));
    expect(page.headers.get('x-per-page')).toBe('1');
    expect(page.headers.get('x-page')).toBe('2');
    expect(page.headers.get('x-next-page')).toBe('3');
    expect(page.headers.get('x-prev-page')).toBe('1');
    expect(await api.get('/broadcast_messages', { query: { per_page: 'x' } })).toMatchObject({ status: 400, body: { error: 'per_page is invalid' } });
  });
});

describe('GET /broadcast_messages/:id', () => {
  it('shows one message; 404 "Not found" for an unknown id, 400 for one that is not an integer', async () => {
    const message = await create({ target_path: '/explore' });
    expect(await api.get(`/broadcast_messages/${message.id}`)).toMatchObject({ status: 200, body: message });
    expect(await api.get('/broadcast_messages/999999')).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await api.get('/broadcast_messages/99999999999')).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await api.get('/broadcast_messages/abc')).toMatchObject({ status: 400, body: { error: 'id is invalid' } });
  });

  it('computes `active` when read: before the start, during, after the end', async () => {
    const message = await create({ starts_at: at(HOUR), ends_at: at(2 * HOUR) });
    const activeAt = async (ms: number) => {
      clock = new Date(T0.getTime() + ms);
      try {
        const one = (await api.get(`/broadcast_messages/${message.id}`)).body.active;
        const listed = (await api.get('/broadcast_messages', { query: { per_page: 100 } })).body.find((m: any) => m.id === message.id).active;
        expect(listed).toBe(one);
        return one;
      } finally {
        clock = T0;
      }
    };
    expect(await activeAt(0)).toBe(false);
    expect(await activeAt(HOUR)).toBe(true);
    expect(await activeAt(1.5 * HOUR)).toBe(true);
    expect(await activeAt(2 * HOUR)).toBe(true);
    expect(await activeAt(2 * HOUR + 1)).toBe(false);
    const past = await create({ starts_at: at(-3 * HOUR), ends_at: at(-2 * HOUR) });
    expect(past.active).toBe(false);
  });
});

describe('PUT /broadcast_messages/:id', () => {
  it('changes the given fields and records only those', async () => {
    const message = await create();
    const res = await api.put(`/broadcast_messages/${message.id}`, { color: '#000000', font: '#cecece', message: 'new message', target_path: '*/welcome' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...message, color: '#000000', font: '#cecece', message: 'new message', target_path: '*/welcome' });
    expect((await api.get(`/broadcast_messages/${message.id}`)).body).toEqual(res.body);
    const last = (await api.events(`broadcast-message-${message.id}`)).at(-1)!;
    expect(last).toMatchObject({
      type: 'BroadcastMessageUpdated',
      data: { id: message.id, changes: { color: '#000000', font: '#cecece', message: 'new message', target_path: '*/welcome' } },
    });
  });

  it('moves the times (and so `active`), clears optional fields with null, appends nothing for no change', async () => {
    const message = await create({ target_path: '/x' });
    const res = await api.put(`/broadcast_messages/${message.id}`, { starts_at: at(0), ends_at: at(3 * HOUR), target_path: null, color: null });
    expect(res.body).toMatchObject({ starts_at: '2026-07-02T10:11:12.000Z', ends_at: '2026-07-02T13:11:12.000Z', target_path: null, color: null, active: true });
    const later = await api.put(`/broadcast_messages/${message.id}`, { starts_at: at(HOUR) });
    expect(later.body.active).toBe(false);
    const count = (await api.events(`broadcast-message-${message.id}`)).length;
    expect((await api.put(`/broadcast_messages/${message.id}`, { starts_at: at(HOUR), message: message.message })).status).toBe(200);
    expect((await api.put(`/broadcast_messages/${message.id}`, {})).body).toEqual(later.body);
    expect(await api.events(`broadcast-message-${message.id}`)).toHaveLength(count);
  });

  it.each<[string, Record<string, unknown>, unknown]>([
    ['a bad color', { color: 'blue' }, { message: { color: ['must be a valid color code'] } }],
    ['a bad font', { font: '#1234567' }, { message: { font: ['must be a valid color code'] } }],
    ['a blank message', { message: '' }, { message: { message: ["can't be blank"] } }],
    ['a null message', { message: null }, { message: { message: ["can't be blank"] } }],
    ['null times', { starts_at: null, ends_at: '' }, { message: { starts_at: ["can't be blank"], ends_at: ["can't be blank"] } }],
    ['an unparsable time', { ends_at: 'tomorrow' }, { error: 'ends_at is invalid' }],
  ])('is 400 with %s, and changes nothing', async (_name, body, expected) => {
    const message = await create();
    const res = await api.put(`/broadcast_messages/${message.id}`, body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(expected);
    expect((await api.get(`/broadcast_messages/${message.id}`)).body).toEqual(message);
    expect(await api.events(`broadcast-message-${message.id}`)).toHaveLength(1);
  });

  it('is 404 for an unknown id; 400 for an id that is not an integer, with the other errors', async () => {
    expect(await api.put('/broadcast_messages/999999', { message: 'x' })).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await api.put('/broadcast_messages/x', { starts_at: 'never' })).toMatchObject({ status: 400, body: { error: 'id is invalid, starts_at is invalid' } });
  });
});

describe('DELETE /broadcast_messages/:id', () => {
  it('deletes: 204 without a body, then 404', async () => {
    const message = await create();
    const res = await api.del(`/broadcast_messages/${message.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await api.get(`/broadcast_messages/${message.id}`)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect((await api.get('/broadcast_messages', { query: { per_page: 100 } })).body.map((m: any) => m.id)).not.toContain(message.id);
    expect((await api.events(`broadcast-message-${message.id}`)).map((e) => e.type)).toEqual(['BroadcastMessageCreated', 'BroadcastMessageDeleted']);
    expect(await api.del(`/broadcast_messages/${message.id}`)).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await api.put(`/broadcast_messages/${message.id}`, { message: 'back' })).toMatchObject({ status: 404, body: NOT_FOUND });
    expect(await api.del('/broadcast_messages/abc')).toMatchObject({ status: 400, body: { error: 'id is invalid' } });
  });

  it('is 412 when the message changed after If-Unmodified-Since', async () => {
    const message = await create();
    const res = await api.del(`/broadcast_messages/${message.id}`, { headers: { 'If-Unmodified-Since': 'Thu, 01 Jan 2015 00:00:00 GMT' } });
    expect(res.status).toBe(412);
    expect((await api.get(`/broadcast_messages/${message.id}`)).status).toBe(200);
  });
});

describe('permissions: administrators only, authentication first', () => {
  const NON_ADMINS: Role[] = ['nonMember', 'guest', 'reporter', 'developer', 'maintainer', 'owner', 'external', 'blocked'];
  const everyone = (admin: number): Partial<Record<Role, number>> => ({ anonymous: 401, ...Object.fromEntries(NON_ADMINS.map((r) => [r, 403])), admin });
  permissionMatrix(
    {
      'GET /broadcast_messages': { instance: everyone(200) },
      'GET /broadcast_messages/:id': { instance: everyone(200) },
      'POST /broadcast_messages': { instance: everyone(201) },
      'PUT /broadcast_messages/:id': { instance: everyone(200) },
      'DELETE /broadcast_messages/:id': { instance: everyone(204) },
    },
    async ({ endpoint, caller, status }) => {
      const token = callers[caller].token;
      const id = (await create()).id;
      // Invalid parameters: the admin check answers first (GitLab's `before { authenticated_as_admin! }`).
      const bad = status !== 200 && status !== 201 && status !== 204;
      const res = await {
        'GET /broadcast_messages': () => api.get('/broadcast_messages', { token, query: bad ? { per_page: 'x' } : {} }),
        'GET /broadcast_messages/:id': () => api.get(`/broadcast_messages/${bad ? 'x' : id}`, { token }),
        'POST /broadcast_messages': () => api.post('/broadcast_messages', bad ? { color: 'x' } : { message: 'by admin' }, { token }),
        'PUT /broadcast_messages/:id': () => api.put(`/broadcast_messages/${id}`, bad ? { color: 'x' } : { message: 'changed' }, { token }),
        'DELETE /broadcast_messages/:id': () => api.del(`/broadcast_messages/${id}`, { token }),
      }[endpoint]!();
      if (res.status === 401) expect(res.body).toEqual({ message: '401 Unauthorized' });
      if (res.status === 403) expect(res.body).toEqual({ message: caller === 'blocked' ? '403 Forbidden - Your account has been blocked.' : '403 Forbidden' });
      if (bad) expect((await api.get(`/broadcast_messages/${id}`)).body.message).toBe('Maintenance tonight');
      return res.status;
    },
  );
});

describe('projection', () => {
  it('a rebuild from the log gives the same rows', async () => {
    await expectReplayEquivalence(api.handle, [broadcastMessagesProjector]);
  });
});
