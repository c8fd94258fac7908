import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, keyRestrictionsOf } from '../../src/domain/application-settings/attributes.js';
import {
  type ApplicationSettingsEvent,
  applicationSettingsDecider,
  applicationSettingsEvents,
  applicationSettingsStreamId,
  normalizeChanges,
  settingsOf,
} from '../../src/domain/application-settings/decider.js';
import { parseDuration } from '../../src/domain/duration.js';
import type { SettingsChanges } from '../../src/domain/application-settings/attributes.js';
import { deciderSpec, rejected } from '../support/decider.js';

const { given } = deciderSpec(applicationSettingsDecider);
const changed = (changes: SettingsChanges): ApplicationSettingsEvent => ({ type: 'ApplicationSettingsChanged', data: { changes } });
const update = (changes: SettingsChanges) => ({ type: 'UpdateApplicationSettings' as const, changes });
const SEALED = 'v1.aXY.dGFn.Y2lwaGVy';

describe('application settings decider', () => {
  it('is one stream', () => {
    expect(applicationSettingsStreamId()).toBe('application-settings');
  });

  it('records the attributes a change sets, and nothing for what is already so', () => {
    given().when(update({ default_projects_limit: 10, signup_enabled: true })).then([changed({ default_projects_limit: 10 })]);
    given(changed({ default_projects_limit: 10 })).when(update({ default_projects_limit: 10 })).then([]);
    given(changed({ default_projects_limit: 10 })).when(update({ default_projects_limit: 100000 })).then([changed({ default_projects_limit: 100000 })]);
  });

  it('folds the changes over the defaults', () => {
    const { state } = given(changed({ default_projects_limit: 10 }), changed({ first_day_of_week: 1 }));
    expect(settingsOf(state.values)).toEqual({ ...DEFAULT_SETTINGS, default_projects_limit: 10, first_day_of_week: 1 });
  });

  it('validates the settings as they would be after the change', () => {
    given().when(update({ akismet_enabled: true })).then(rejected('invalid', { fields: { akismet_api_key: ["can't be blank"] } }));
    given(changed({ akismet_api_key: SEALED })).when(update({ akismet_enabled: true })).then([changed({ akismet_enabled: true })]);
    given(changed({ external_authorization_service_enabled: false, external_authorization_service_timeout: 30 }))
      .when(update({ external_authorization_service_enabled: true, external_authorization_service_default_label: 'l' }))
      .then(rejected('invalid', { fields: { external_authorization_service_timeout: ['must be less than or equal to 10'] } }));
    given().when(update({ archive_builds_in_human_readable: '86399' })).then(rejected('invalid', { fields: { archive_builds_in_seconds: ['must be greater than or equal to 86400'] } }));
    given().when(update({ archive_builds_in_human_readable: '1 day' })).then([changed({ archive_builds_in_human_readable: '1 day' })]);
    given().when(update({ diff_max_patch_bytes: 1024 })).then(rejected('invalid', { fields: { diff_max_patch_bytes: ['must be greater than or equal to 102400'] } }));
    given().when(update({ eks_integration_enabled: true, eks_account_id: '12', eks_access_key_id: 'short', eks_secret_access_key: SEALED })).then(
      rejected('invalid', { fields: { eks_account_id: ['must be a 12-digit number'], eks_access_key_id: ['is too short (minimum is 16 characters)'] } }),
    );
    given().when(update({ default_ci_config_path: '../secrets.yml' })).then(
      rejected('invalid', { fields: { default_ci_config_path: ['cannot include leading slash or directory traversal.'] } }),
    );
  });

  it('takes only sealed secrets in its events', () => {
    const schema = applicationSettingsEvents.ApplicationSettingsChanged;
    expect(schema.safeParse({ changes: { akismet_api_key: SEALED } }).success).toBe(true);
    expect(schema.safeParse({ changes: { akismet_api_key: 'plain-text-key' } }).success).toBe(false);
    expect(schema.safeParse({ changes: { unknown_setting: 1 } }).success).toBe(false);
  });
});

describe('normalizeChanges', () => {
  it("does what GitLab's setters do", () => {
    expect(
      normalizeChanges(
        {
          enabled_git_access_protocol: 'nil',
          restricted_visibility_levels: ['0', 'public'],
          asset_proxy_whitelist: [' a.com '],
          disabled_oauth_sign_in_sources: ['github'],
          domain_blacklist: [''],
          archive_builds_in_human_readable: ' ',
        },
        { host: 'gitlab.example.com' },
      ),
    ).toEqual({
      enabled_git_access_protocol: null,
      restricted_visibility_levels: ['private', 'public'],
      asset_proxy_whitelist: ['a.com', 'gitlab.example.com'],
      disabled_oauth_sign_in_sources: [],
      domain_blacklist: [],
      archive_builds_in_human_readable: null,
    });
  });
});

describe('parseDuration', () => {
  it.each([
    ['1 day', 86400],
    ['2 weeks and 1 day', 15 * 86400],
    ['1h 30m', 5400],
    ['30 days', 30 * 86400],
    ['90', 90],
    ['1 fortnight', undefined],
    ['soon', undefined],
    ['', undefined],
  ])('%j → %s', (text, seconds) => {
    expect(parseDuration(text)).toBe(seconds);
  });
});

describe('key restrictions', () => {
  it('per key type, from the settings', () => {
    expect(keyRestrictionsOf({ ...DEFAULT_SETTINGS, rsa_key_restriction: 2048, ed25519_key_restriction: -1 })).toEqual({ rsa_key_restriction: 2048, dsa_key_restriction: 0, ecdsa_key_restriction: 0, ed25519_key_restriction: -1 });
  });
});
