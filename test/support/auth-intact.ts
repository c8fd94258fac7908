import { expect } from 'vitest';
import type { TestServer } from './server.js';

/**
 * Authentication means what it meant before a hostile request: nothing was written onto
 * Object.prototype, root is root, a user is themself and may still write with a body.
 */
export async function expectAuthenticationIntact(api: TestServer, user: { user: { username: string }; token: string }) {
  expect(Object.prototype).not.toHaveProperty('sudo');
  expect(Object.prototype).not.toHaveProperty('x');
  const root = await api.get('/user');
  expect(root.status).toBe(200);
  expect(root.body.username).toBe('root');
  const me = await api.get('/user', { token: user.token });
  expect(me.status).toBe(200);
  expect(me.body.username).toBe(user.user.username);
  const status = await api.put('/user/status', { message: 'still me' }, { token: user.token });
  expect(status.status).toBe(200);
  expect(status.body.message).toBe('still me');
}
