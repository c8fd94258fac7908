import { describe, expect, it } from 'vitest';
import { StartupError, loadConfig } from '../../src/config.js';

describe('the delivery sender configuration', () => {
  it('defaults: first retry after a minute, 5 attempts, 10 s per request', () => {
    expect(loadConfig({}).delivery).toEqual({ backoffMs: 60_000, maxAttempts: 5, timeoutMs: 10_000 });
  });

  it('takes FORGELOG_DELIVERY_BACKOFF_MS, _MAX_ATTEMPTS and _TIMEOUT_MS', () => {
    const env = { FORGELOG_DELIVERY_BACKOFF_MS: '1500', FORGELOG_DELIVERY_MAX_ATTEMPTS: '2', FORGELOG_DELIVERY_TIMEOUT_MS: '300' };
    expect(loadConfig(env).delivery).toEqual({ backoffMs: 1500, maxAttempts: 2, timeoutMs: 300 });
  });

  it.each([
    ['FORGELOG_DELIVERY_BACKOFF_MS', '0'],
    ['FORGELOG_DELIVERY_MAX_ATTEMPTS', '1.5'],
    ['FORGELOG_DELIVERY_TIMEOUT_MS', ''],
    ['FORGELOG_DELIVERY_TIMEOUT_MS', 'ten'],
  ])('refuses %s=%j at start', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(StartupError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} must be a whole number of (milliseconds|attempts), at least 1, got ${JSON.stringify(JSON.stringify(value)).slice(1, -1)}$`));
  });
});
