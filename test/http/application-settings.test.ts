import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportEvents } from '../../src/eventstore/export.js';
import { applicationSettingsProjector } from '../../src/projections/application-settings/projector.js';
import { eventually } from '../support/fixtures.js';
import { permissionMatrix } from '../support/matrix.js';
import { expectReplayEquivalence } from '../support/replay.js';
import { createCallers, type Callers } from '../support/roles.js';
import { onPlan, startTestServer, type TestServer } from '../support/server.js';

let api: TestServer;
let callers: Callers;
let readApiAdmin: string;

beforeAll(async () => {
  api = await startTestServer();
  callers = await createCallers(api);
  readApiAdmin = (await api.createUser({ admin: true }, ['read_api'])).token;
});
afterAll(() => api.close());

const PATH = '/application/settings';
const STREAM = 'application-settings';
const put = (body: Record<string, unknown>) => api.put(PATH, body);

describe('GET /application/settings', () => {
  it("answers GitLab's defaults on a fresh instance", async () => {
    const res = await api.get(PATH);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: 1,
      default_projects_limit: 100000,
      default_branch_protection: 2,
      default_project_visibility: 'private',
      default_group_visibility: 'private',
      default_snippet_visibility: 'private',
      default_project_creation: 2,
      first_day_of_week: 0,
      domain_whitelist: null,
      domain_blacklist: [],
      domain_blacklist_enabled: false,
      rsa_key_restriction: 0,
      dsa_key_restriction: 0,
      ecdsa_key_restriction: 0,
      ed25519_key_restriction: 0,
      signup_enabled: true,
      restricted_visibility_levels: [],
      password_authentication_enabled_for_web: true,
      password_authentication_enabled: true,
      signin_enabled: true,
      max_attachment_size: 10,
      session_expire_delay: 10080,
      container_registry_token_expire_delay: 5,
      default_artifacts_expire_in: '30 days',
      repository_storages: ['default'],
      gitaly_timeout_default: 55,
      gitaly_timeout_fast: 10,
      gitaly_timeout_medium: 30,
      external_authorization_service_enabled: false,
      external_authorization_service_timeout: 0.5,
      akismet_api_key: null,
      allow_local_requests_from_system_hooks: true,
      allow_local_requests_from_hooks_and_services: false,
      commit_email_hostname: `users.noreply.${new URL(api.url).hostname}`,
      elasticsearch_url: ['http://localhost:9200'],
      deletion_adjourned_period: 7,
      performance_bar_allowed_group_id: null,
      polling_interval_multiplier: 1,
      enabled_git_access_protocol: null,
      archive_builds_in_human_readable: null,
    });
    // GitLab's entity never shows these two secrets.
    expect(res.body).not.toHaveProperty('asset_proxy_secret_key');
    expect(res.body).not.toHaveProperty('eks_secret_access_key');
  });
});

describe('GET /application/settings: the rest of GitLab 12.10\'s attributes', () => {
  it("shows every attribute of ApplicationSettingsHelper#visible_attributes with GitLab's defaults", async () => {
    const res = await api.get(PATH);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      throttle_authenticated_api_enabled: false,
      throttle_authenticated_api_period_in_seconds: 3600,
      throttle_authenticated_api_requests_per_period: 7200,
      throttle_authenticated_web_enabled: false,
      throttle_authenticated_web_period_in_seconds: 3600,
      throttle_authenticated_web_requests_per_period: 7200,
      throttle_unauthenticated_enabled: false,
      throttle_unauthenticated_period_in_seconds: 3600,
      throttle_unauthenticated_requests_per_period: 3600,
      throttle_protected_paths_enabled: false,
      throttle_protected_paths_period_in_seconds: 60,
      throttle_protected_paths_requests_per_period: 10,
      require_two_factor_authentication: false,
      two_factor_grace_period: 48,
      send_user_confirmation_email: false,
      version_check_enabled: true,
      usage_ping_enabled: true,
      help_page_text: null,
      help_page_hide_commercial_content: false,
      help_page_support_url: null,
      time_tracking_limit_to_hours: false,
      unique_ips_limit_enabled: false,
      unique_ips_limit_per_user: 10,
      unique_ips_limit_time_window: 3600,
      project_export_enabled: true,
      html_emails_enabled: true,
      hashed_storage_enabled: true,
      housekeeping_enabled: true,
      housekeeping_bitmaps_enabled: true,
      housekeeping_full_repack_period: 50,
      housekeeping_gc_period: 200,
      housekeeping_incremental_repack_period: 10,
      metrics_enabled: false,
      metrics_host: 'localhost',
      metrics_port: 8089,
      metrics_pool_size: 16,
      metrics_timeout: 10,
      metrics_method_call_threshold: 10,
      metrics_sample_interval: 15,
      metrics_packet_size: 1,
      receive_max_input_size: null,
      import_sources: ['github', 'bitbucket', 'bitbucket_server', 'gitlab', 'google_code', 'fogbugz', 'git', 'gitlab_project', 'gitea', 'manifest', 'phabricator'],
      max_artifacts_size: 100,
      max_pages_size: 100,
      minimum_password_length: 8,
      mirror_available: true,
      password_authentication_enabled_for_git: true,
      recaptcha_enabled: false,
      recaptcha_site_key: null,
      recaptcha_private_key: null,
      shared_runners_enabled: true,
      snippet_size_limit: 52428800,
      push_event_hooks_limit: 3,
      push_event_activities_limit: 3,
      sourcegraph_public_only: true,
      user_default_external: false,
      issues_create_limit: 300,
      raw_blob_request_limit: 300,
      // EE, under the test's ultimate plan.
      mirror_max_delay: 300,
      mirror_max_capacity: 100,
      mirror_capacity_threshold: 50,
      pseudonymizer_enabled: false,
      repository_size_limit: 0,
      shared_runners_minutes: 0,
      elasticsearch_shards: 5,
      elasticsearch_replicas: 1,
    });
  });

  it('hides the paid ones under the free plan, as GitLab CE has none of them', async () => {
    const body = await onPlan(api, 'free', async () => (await api.get(PATH)).body);
    expect(body).toHaveProperty('throttle_authenticated_api_enabled', false);
    for (const name of ['mirror_max_delay', 'mirror_max_capacity', 'mirror_capacity_threshold', 'pseudonymizer_enabled', 'repository_size_limit', 'help_text', 'slack_app_secret']) {
      expect(body).not.toHaveProperty(name);
    }
  });
});

describe('PUT /application/settings', () => {
  it('changes attributes given as query or body, answers and keeps them, and records only what changed', async () => {
    const before = (await api.events(STREAM)).length;
    const res = await api.put(PATH, undefined, { query: { default_projects_limit: 7, first_day_of_week: 1 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ default_projects_limit: 7, first_day_of_week: 1 });
    const body = await put({ sign_in_text: 'Welcome', domain_whitelist: ['example.com', '*.example.org'], default_projects_limit: 7 });
    expect(body.body).toMatchObject({ sign_in_text: 'Welcome', domain_whitelist: ['example.com', '*.example.org'], default_projects_limit: 7 });
    expect((await api.get(PATH)).body).toMatchObject({ sign_in_text: 'Welcome', first_day_of_week: 1, default_projects_limit: 7 });
    const events = (await api.events(STREAM)).slice(before);
    expect(events.map((e) => [e.type, e.data])).toEqual([
      ['ApplicationSettingsChanged', { changes: { default_projects_limit: 7, first_day_of_week: 1 } }],
      ['ApplicationSettingsChanged', { changes: { sign_in_text: 'Welcome', domain_whitelist: ['example.com', '*.example.org'] } }],
    ]);
    // Nothing new: no event.
    expect((await put({ sign_in_text: 'Welcome' })).status).toBe(200);
    expect(await api.events(STREAM)).toHaveLength(before + 2);
    expect((await api.get(PATH)).body.updated_at).toEqual(expect.any(String));
    await put({ default_projects_limit: 100000, first_day_of_week: 0 });
  });

  it('stores and shows the throttle_* attributes given alone, and keeps them beside a known attribute', async () => {
    const before = (await api.events(STREAM)).length;
    const throttle = {
      throttle_authenticated_api_enabled: true,
      throttle_authenticated_api_requests_per_period: 100,
      throttle_authenticated_api_period_in_seconds: 60,
      throttle_authenticated_web_enabled: true,
      throttle_authenticated_web_requests_per_period: 200,
      throttle_authenticated_web_period_in_seconds: 120,
      throttle_unauthenticated_enabled: true,
      throttle_unauthenticated_requests_per_period: 300,
      throttle_unauthenticated_period_in_seconds: 180,
    };
    const res = await put(throttle);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject(throttle);
    expect((await api.get(PATH)).body).toMatchObject(throttle);
    const beside = await api.put(PATH, undefined, { query: { sign_in_text: 'throttled', throttle_protected_paths_enabled: 'true', usage_ping_enabled: 'false', help_page_text: 'Ask the admins' } });
    expect(beside.status).toBe(200);
    expect(beside.body).toMatchObject({ sign_in_text: 'throttled', throttle_protected_paths_enabled: true, usage_ping_enabled: false, help_page_text: 'Ask the admins' });
    const events = (await api.events(STREAM)).slice(before);
    expect(events.map((e) => e.data)).toEqual([
      { changes: throttle },
      { changes: { sign_in_text: 'throttled', throttle_protected_paths_enabled: true, usage_ping_enabled: false, help_page_text: 'Ask the admins' } },
    ]);
    await put({
      throttle_authenticated_api_enabled: false,
      throttle_authenticated_web_enabled: false,
      throttle_unauthenticated_enabled: false,
      throttle_protected_paths_enabled: false,
      usage_ping_enabled: true,
      help_page_text: '',
      sign_in_text: '',
    });
  });

  it('takes the other attributes of GitLab 12.10 and their Grape requirements when given together', async () => {
    const res = await put({
      require_two_factor_authentication: true,
      two_factor_grace_period: 0,
      housekeeping_enabled: true,
      housekeeping_bitmaps_enabled: false,
      housekeeping_incremental_repack_period: 5,
      housekeeping_full_repack_period: 5,
      housekeeping_gc_period: 5,
      metrics_enabled: true,
      metrics_host: 'influx.example.com',
      metrics_method_call_threshold: 5,
      metrics_packet_size: 2,
      metrics_pool_size: 4,
      metrics_port: 8090,
      metrics_sample_interval: 30,
      metrics_timeout: 5,
      import_sources: 'github,gitlab_project',
      receive_max_input_size: 50,
      unique_ips_limit_enabled: true,
      unique_ips_limit_per_user: 1,
      unique_ips_limit_time_window: 0,
      mirror_max_capacity: 20,
      mirror_capacity_threshold: 20,
      pseudonymizer_enabled: true,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      require_two_factor_authentication: true,
      two_factor_grace_period: 0,
      housekeeping_bitmaps_enabled: false,
      housekeeping_gc_period: 5,
      metrics_enabled: true,
      metrics_host: 'influx.example.com',
      import_sources: ['github', 'gitlab_project'],
      receive_max_input_size: 50,
      unique_ips_limit_per_user: 1,
      mirror_capacity_threshold: 20,
      pseudonymizer_enabled: true,
    });
    await put({
      require_two_factor_authentication: false,
      two_factor_grace_period: 48,
      housekeeping_enabled: true,
      housekeeping_bitmaps_enabled: true,
      housekeeping_incremental_repack_period: 10,
      housekeeping_full_repack_period: 50,
      housekeeping_gc_period: 200,
      metrics_enabled: false,
      unique_ips_limit_enabled: false,
      unique_ips_limit_per_user: 10,
      unique_ips_limit_time_window: 3600,
      mirror_capacity_threshold: 50,
      mirror_max_capacity: 100,
      pseudonymizer_enabled: false,
    });
  });

  it('refuses the paid attributes under the free plan as parameters GitLab CE does not declare', async () => {
    const res = await onPlan(api, 'free', () => put({ mirror_max_capacity: 5 }));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/ at least one parameter must be provided$/);
    expect(res.body.error).toContain('throttle_authenticated_api_enabled');
    expect(res.body.error).not.toContain('mirror_max_capacity');
  });

  it("takes GitLab's legacy names, comma-separated lists and visibility levels", async () => {
    const res = await put({ signin_enabled: false, allow_local_requests_from_hooks_and_services: true, domain_blacklist: 'a.com, b.com', restricted_visibility_levels: ['20', 'internal'], enabled_git_access_protocol: 'nil' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      password_authentication_enabled_for_web: false,
      signin_enabled: false,
      allow_local_requests_from_web_hooks_and_services: true,
      domain_blacklist: ['a.com', 'b.com'],
      restricted_visibility_levels: ['public', 'internal'],
      enabled_git_access_protocol: null,
    });
    const conflict = await put({ signin_enabled: true, password_authentication_enabled_for_web: true });
    expect(conflict.body).toEqual({ error: 'password_authentication_enabled_for_web, password_authentication_enabled, signin_enabled are mutually exclusive' });
    await put({ password_authentication_enabled_for_web: true, allow_local_requests_from_web_hooks_and_services: false, domain_blacklist: '', restricted_visibility_levels: [] });
  });

  it.each([
    [{ akismet_enabled: true }, 'akismet_api_key is missing'],
    [{ asset_proxy_enabled: true }, 'asset_proxy_url is missing'],
    [{ domain_blacklist_enabled: true }, 'domain_blacklist is missing'],
    [{ enforce_terms: true }, 'terms is missing'],
    [{ external_auth_client_cert: 'PEM' }, 'external_auth_client_key is missing'],
    [
      { external_authorization_service_enabled: true },
      'external_authorization_service_default_label is missing, external_authorization_service_timeout is missing, external_authorization_service_url is missing',
    ],
    [{ default_projects_limit: 'many' }, 'default_projects_limit is invalid'],
    [{ default_project_creation: 3 }, 'default_project_creation does not have a valid value'],
    [{ default_branch_protection: -1 }, 'default_branch_protection does not have a valid value'],
    [{ default_group_visibility: 'secret' }, 'default_group_visibility does not have a valid value'],
    [{ enabled_git_access_protocol: 'ftp' }, 'enabled_git_access_protocol does not have a valid value'],
    [{ rsa_key_restriction: 1000 }, 'rsa_key_restriction does not have a valid value'],
    [{ ed25519_key_restriction: 384 }, 'ed25519_key_restriction does not have a valid value'],
    [{ external_authorization_service_timeout: 'soon' }, 'external_authorization_service_timeout is invalid'],
    [{ throttle_authenticated_api_requests_per_period: 'many' }, 'throttle_authenticated_api_requests_per_period is invalid'],
    [{ throttle_unauthenticated_enabled: 'maybe' }, 'throttle_unauthenticated_enabled is invalid'],
    [{ require_two_factor_authentication: true }, 'two_factor_grace_period is missing'],
    [{ recaptcha_enabled: true }, 'recaptcha_site_key is missing, recaptcha_private_key is missing'],
    [{ login_recaptcha_protection_enabled: true, recaptcha_site_key: 'site' }, 'recaptcha_private_key is missing'],
    [{ shared_runners_enabled: true }, 'shared_runners_text is missing'],
    [{ sourcegraph_enabled: true }, 'sourcegraph_url is missing'],
    [{ snowplow_enabled: true }, 'snowplow_collector_hostname is missing'],
    [
      { housekeeping_enabled: true },
      'housekeeping_bitmaps_enabled is missing, housekeeping_full_repack_period is missing, housekeeping_gc_period is missing, housekeeping_incremental_repack_period is missing',
    ],
    [
      { metrics_enabled: true },
      'metrics_host is missing, metrics_method_call_threshold is missing, metrics_packet_size is missing, metrics_pool_size is missing, metrics_port is missing, metrics_sample_interval is missing, metrics_timeout is missing',
    ],
    [{ import_sources: ['github', 'svn'] }, 'import_sources does not have a valid value'],
  ])('answers Grape 400 for %j', async (body, error) => {
    const res = await put(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error });
  });

  it('answers 400 for no attribute at all, naming them', async () => {
    const res = await api.put(PATH);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^admin_notification_email, after_sign_out_path, .*, signin_enabled are missing, at least one parameter must be provided$/);
  });

  it.each([
    [{ external_authorization_service_enabled: true, external_authorization_service_default_label: 'x', external_authorization_service_url: 'https://auth.example.com', external_authorization_service_timeout: 10.5 }, { external_authorization_service_timeout: ['must be less than or equal to 10'] }],
    [{ external_authorization_service_enabled: true, external_authorization_service_default_label: '', external_authorization_service_url: 'https://auth.example.com', external_authorization_service_timeout: 0 }, { external_authorization_service_default_label: ["can't be blank"], external_authorization_service_timeout: ['must be greater than 0'] }],
    [{ archive_builds_in_human_readable: '3 hours' }, { archive_builds_in_seconds: ['must be greater than or equal to 86400'] }],
    [{ archive_builds_in_human_readable: 'whenever' }, { archive_builds_in_human_readable: ['is not a correct duration'] }],
    [{ domain_blacklist_enabled: true, domain_blacklist: '' }, { domain_blacklist: ['Domain blacklist cannot be empty if Blacklist is enabled.'] }],
    [{ akismet_enabled: true, akismet_api_key: '' }, { akismet_api_key: ["can't be blank"] }],
    [{ enforce_terms: true, terms: '' }, { base: ['You need to set terms to be enforced'] }],
    [{ gitaly_timeout_fast: 60 }, { gitaly_timeout_medium: ['must be greater than or equal to 60'], gitaly_timeout_fast: ['must be less than or equal to 55'] }],
    [{ rsa_key_restriction: -1, dsa_key_restriction: -1, ecdsa_key_restriction: -1, ed25519_key_restriction: -1 }, { allowed_key_types: ["can't be blank"] }],
    [{ restricted_visibility_levels: ['secret'] }, { restricted_visibility_levels: ["'secret' is not a valid visibility level"] }],
    [{ repository_storages: ['default', 'other'] }, { repository_storages: ["can't include: other"] }],
    [{ home_page_url: 'not a url' }, { home_page_url: ['must be a valid URL'] }],
    [{ minimum_password_length: 4 }, { minimum_password_length: ['must be greater than or equal to 8'] }],
    [{ minimum_password_length: 129 }, { minimum_password_length: ['must be less than or equal to 128'] }],
    [{ require_two_factor_authentication: true, two_factor_grace_period: -1 }, { two_factor_grace_period: ['must be greater than or equal to 0'] }],
    [{ recaptcha_enabled: true, recaptcha_site_key: '', recaptcha_private_key: '' }, { recaptcha_site_key: ["can't be blank"], recaptcha_private_key: ["can't be blank"] }],
    [{ unique_ips_limit_enabled: true, unique_ips_limit_per_user: 0, unique_ips_limit_time_window: -1 }, { unique_ips_limit_per_user: ['must be greater than or equal to 1'], unique_ips_limit_time_window: ['must be greater than or equal to 0'] }],
    [{ help_page_support_url: 'support' }, { help_page_support_url: ['must be a valid URL'] }],
    [{ max_artifacts_size: 0 }, { max_artifacts_size: ['must be greater than 0'] }],
    [{ max_pages_size: 1048576 }, { max_pages_size: ['must be less than 1048576'] }],
    [
      { housekeeping_enabled: true, housekeeping_bitmaps_enabled: true, housekeeping_incremental_repack_period: 0, housekeeping_full_repack_period: 50, housekeeping_gc_period: 20 },
      { housekeeping_incremental_repack_period: ['must be greater than 0'], housekeeping_gc_period: ['must be greater than or equal to 50'] },
    ],
    [{ housekeeping_full_repack_period: 5 }, { housekeeping_full_repack_period: ['must be greater than or equal to 10'] }],
    [{ static_objects_external_storage_url: 'https://cdn.example.com' }, { static_objects_external_storage_auth_token: ["can't be blank"] }],
    [{ push_event_hooks_limit: -1, push_event_activities_limit: -1 }, { push_event_hooks_limit: ['must be greater than or equal to 0'], push_event_activities_limit: ['must be greater than or equal to 0'] }],
    [{ snippet_size_limit: 0 }, { snippet_size_limit: ['must be greater than 0'] }],
    [{ issues_create_limit: -1, raw_blob_request_limit: -1 }, { issues_create_limit: ['must be greater than or equal to 0'], raw_blob_request_limit: ['must be greater than or equal to 0'] }],
    [{ mirror_max_capacity: 0 }, { mirror_max_capacity: ['must be greater than 0'], mirror_capacity_threshold: ["Project's mirror capacity threshold can't be higher than it's maximum capacity"] }],
    [{ repository_size_limit: -1, shared_runners_minutes: -1 }, { repository_size_limit: ['must be greater than or equal to 0'], shared_runners_minutes: ['must be greater than or equal to 0'] }],
  ])("answers the model's 400 for %j, changing nothing", async (body, message) => {
    const before = await api.get(PATH);
    const res = await put({ ...body, sign_in_text: 'not kept' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ message });
    expect((await api.get(PATH)).body).toEqual(before.body);
  });

  it('accepts the bounds: a timeout of 10 seconds, archiving after a day, key restrictions of supported sizes', async () => {
    const res = await put({
      external_authorization_service_enabled: true,
      external_authorization_service_default_label: 'default',
      external_authorization_service_url: 'https://auth.example.com',
      external_authorization_service_timeout: '10',
      archive_builds_in_human_readable: '1 day',
      rsa_key_restriction: 2048,
      ecdsa_key_restriction: -1,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ external_authorization_service_timeout: 10, archive_builds_in_human_readable: '1 day', rsa_key_restriction: 2048, ecdsa_key_restriction: -1 });
    const off = await put({ external_authorization_service_enabled: false, archive_builds_in_human_readable: '', rsa_key_restriction: 0, ecdsa_key_restriction: 0 });
    expect(off.body).toMatchObject({ external_authorization_service_enabled: false, archive_builds_in_human_readable: null, rsa_key_restriction: 0 });
  });
});

describe('secrets', () => {
  const SECRETS = {
    akismet_api_key: 'akismet-secret-1234',
    asset_proxy_secret_key: 'asset-proxy-secret-5678',
    eks_secret_access_key: 'eks-secret-9012',
    elasticsearch_aws_secret_access_key: 'es-secret-3456',
    external_auth_client_key: 'client-key-secret-7890',
    external_auth_client_key_pass: 'client-pass-secret-1357',
    recaptcha_private_key: 'recaptcha-secret-2468',
    static_objects_external_storage_auth_token: 'static-objects-secret-1122',
    slack_app_secret: 'slack-app-secret-3344',
    slack_app_verification_token: 'slack-verification-secret-5566',
  };

  it('are kept sealed in the log, the read table and the export; GET shows the ones GitLab shows', async () => {
    const res = await put({ ...SECRETS, akismet_enabled: true, external_auth_client_cert: 'CERT' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      akismet_api_key: SECRETS.akismet_api_key,
      elasticsearch_aws_secret_access_key: SECRETS.elasticsearch_aws_secret_access_key,
      external_auth_client_key: SECRETS.external_auth_client_key,
      external_auth_client_key_pass: SECRETS.external_auth_client_key_pass,
      recaptcha_private_key: SECRETS.recaptcha_private_key,
      static_objects_external_storage_auth_token: SECRETS.static_objects_external_storage_auth_token,
      slack_app_secret: SECRETS.slack_app_secret,
      slack_app_verification_token: SECRETS.slack_app_verification_token,
    });
    expect(res.body).not.toHaveProperty('asset_proxy_secret_key');
    expect(res.body).not.toHaveProperty('eks_secret_access_key');

    const { rows } = await sql<{ row: string }>`select e::text as row from events e`.execute(api.handle.db);
    const { rows: read } = await sql<{ row: string }>`select s::text as row from application_settings s`.execute(api.handle.db);
    // The export reads in gap-free order: a transaction open anywhere in the cluster (another
    // test file's) holds its horizon back for a moment, so wait for the event to be exportable.
    const exported = await eventually(async () => {
      let text = '';
      await exportEvents(api.handle.db, new Writable({ write: (chunk, _encoding, done) => ((text += String(chunk)), done()) }));
      return text.includes('ApplicationSettingsChanged') ? text : undefined;
    });
    const stored = [...rows, ...read].map((r) => r.row).join('\n') + exported;
    for (const secret of Object.values(SECRETS)) expect(stored).not.toContain(secret);

    // The same secret again is no change; a blank one clears it.
    const before = (await api.events(STREAM)).length;
    await put({ akismet_api_key: SECRETS.akismet_api_key });
    expect(await api.events(STREAM)).toHaveLength(before);
    const cleared = await put({ akismet_enabled: false, akismet_api_key: '', external_auth_client_cert: '', external_auth_client_key: '' });
    expect(cleared.body).toMatchObject({ akismet_api_key: null, external_auth_client_key: null });
  });
});

describe('permissions', () => {
  const calls = {
    'GET /application/settings': (token: string | null) => api.get(PATH, { token }),
    'PUT /application/settings': (token: string | null) => api.put(PATH, { sign_in_text: 'matrix' }, { token }),
  };
  const row = { anonymous: 401, nonMember: 403, external: 403, blocked: 403, admin: 200 };
  permissionMatrix({ 'GET /application/settings': { instance: row }, 'PUT /application/settings': { instance: row } }, async ({ endpoint, caller }) => {
    const res = await calls[endpoint as keyof typeof calls](callers[caller as keyof Callers].token);
    if (res.status === 401) expect(res.body).toEqual({ message: '401 Unauthorized' });
    return res.status;
  });

  it('lets an administrator token with read_api read, not change', async () => {
    expect((await api.get(PATH, { token: readApiAdmin })).status).toBe(200);
    const res = await api.put(PATH, { sign_in_text: 'x' }, { token: readApiAdmin });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('insufficient_scope');
  });
});

describe('the projection', () => {
  it('rebuilt from the log gives the row the inline path wrote', async () => {
    await expectReplayEquivalence(api.handle, [applicationSettingsProjector]);
  });
});
