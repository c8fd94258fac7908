import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/database/database.js';
import { seal, unseal, unsealIfOurs } from '../../src/security/sealing.js';
import { openTestDatabase } from '../support/database.js';

let handle: DatabaseHandle;
beforeAll(async () => {
  handle = await openTestDatabase();
});
afterAll(() => handle.close());

describe('unsealIfOurs', () => {
  it("opens this instance's seal, answers null for another instance's, and throws when the key cannot be read", async () => {
    const mine = await seal(handle.db, 'application_settings', 'akismet_api_key', 'secret');
    expect(await unsealIfOurs(handle.db, 'application_settings', 'akismet_api_key', mine)).toBe('secret');
    // Another context (attribute) is another seal: not opened.
    expect(await unsealIfOurs(handle.db, 'application_settings', 'recaptcha_private_key', mine)).toBeNull();

    // Another instance: the same table with its own key (a fresh handle reads the key again).
    const other = await openTestDatabase();
    try {
      await sql`update instance_keys set secret = ${randomBytes(32).toString('hex')} where name = 'application_settings'`.execute(other.db);
      expect(await unsealIfOurs(other.db, 'application_settings', 'akismet_api_key', mine)).toBeNull();
      await expect(unseal(other.db, 'application_settings', 'akismet_api_key', mine)).rejects.toThrow();
      // No key to read is no foreign seal: the failure is the caller's to answer (a 500 or a 503), not an unset secret.
      await sql`delete from instance_keys where name = 'hooks'`.execute(other.db);
      await expect(unsealIfOurs(other.db, 'hooks', 'token', mine)).rejects.toThrow(/instance key hooks is missing/);
    } finally {
      await other.close();
    }
  });
});
