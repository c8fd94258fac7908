import { describe, expect, it } from 'vitest';
import { DEFAULT_FLAGS, KINDS, isSecretField, shownFields } from '../../src/domain/integrations/catalogue.js';
import { integrationDecider, type IntegrationCommand, type IntegrationEvent } from '../../src/domain/integrations/decider.js';
import { deciderSpec, rejected } from '../support/decider.js';

const { on } = deciderSpec(integrationDecider);
const slack = { projectId: 7, kind: 'slack' };
const save = (more: Partial<Extract<IntegrationCommand, { type: 'SaveIntegration' }>> = {}): IntegrationCommand => ({
  type: 'SaveIntegration',
  newId: 3,
  properties: {},
  flags: {},
  secrets: { webhook: 'f1' },
  urlErrors: {},
  ...more,
});
const saved = (more: Partial<Extract<IntegrationEvent, { type: 'IntegrationSaved' }>['data']> = {}): IntegrationEvent => ({
  type: 'IntegrationSaved',
  data: { id: 3, project_id: 7, kind: 'slack', flags: DEFAULT_FLAGS, properties: { notify_only_broken_pipelines: true, branches_to_be_notified: 'all' }, secrets: { webhook: 'f1' }, ...more },
});

describe('the catalogue', () => {
  it('has every GitLab 12 kind once, each with a required parameter', () => {
    const slugs = KINDS.map((k) => k.slug);
    expect(new Set(slugs).size).toBe(slugs.length);
    expect(slugs.length).toBe(33);
    for (const kind of KINDS) expect(kind.fields.some((f) => f.required)).toBe(true);
  });

  it('hides what api_field_names hides, and seals every hidden credential and the webhook', () => {
    const bamboo = KINDS.find((k) => k.slug === 'bamboo')!;
    expect(shownFields(bamboo).map((f) => f.name)).toEqual(['bamboo_url', 'username']);
    expect(['password', 'api_key', 'token', 'user_key', 'webhook'].every(isSecretField)).toBe(true);
    expect(['title', 'description', 'username', 'channel'].some(isSecretField)).toBe(false);
  });
});

describe('SaveIntegration', () => {
  it('saves a new one with the given id, its defaults and every flag true', () => {
    on(slack).given().when(save()).then([saved()]);
  });

  it('keeps its id and merges what is sent; nothing sent that changes appends nothing', () => {
    on(slack).given(saved()).when(save({ newId: 9, properties: { channel: 'x' }, flags: { push_events: false } })).then([
      saved({ properties: { notify_only_broken_pipelines: true, branches_to_be_notified: 'all', channel: 'x' }, flags: { ...DEFAULT_FLAGS, push_events: false } }),
    ]);
    on(slack).given(saved()).when(save({ newId: 9 })).then([]);
  });

  it('refuses a blank required field, the URL errors found, a branch choice not in the list', () => {
    on(slack)
      .given()
      .when(save({ secrets: { webhook: null }, properties: { branches_to_be_notified: 'x' } }))
      .then(rejected('invalid', { fields: { webhook: ["can't be blank", 'must be a valid URL'], branches_to_be_notified: ['is not included in the list'] } }));
    on(slack)
      .given()
      .when(save({ urlErrors: { webhook: ['is blocked: Requests to localhost are not allowed'] } }))
      .then(rejected('invalid', { fields: { webhook: ['is blocked: Requests to localhost are not allowed'] } }));
  });
});

describe('DisableIntegration', () => {
  it('disables a saved one, and even a never-saved one (GitLab saves it inactive); twice changes nothing', () => {
    const disabled: IntegrationEvent = { type: 'IntegrationDisabled', data: { id: 3, project_id: 7, kind: 'slack' } };
    on(slack).given(saved()).when({ type: 'DisableIntegration', newId: 9 }).then([disabled]);
    on(slack).given().when({ type: 'DisableIntegration', newId: 3 }).then([disabled]);
    on(slack).given(saved(), disabled).when({ type: 'DisableIntegration', newId: 9 }).then([]);
  });
});
