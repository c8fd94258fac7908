import { describe, expect, it } from 'vitest';
import {
  type EnvironmentCommand,
  type EnvironmentEvent,
  environmentClaims,
  environmentDecider,
  environmentSlug,
  environmentStreamId,
} from '../../src/domain/environments.js';
import { deciderSpec, rejected } from '../support/decider.js';

const { on } = deciderSpec(environmentDecider);

const ID = 4;
const PROJECT = 9;
const ref = { id: ID, project_id: PROJECT };
const created = (name = 'production', external_url: string | null = null): EnvironmentEvent => ({
  type: 'EnvironmentCreated',
  data: { ...ref, name, slug: environmentSlug(name, 'abc123'), external_url },
});
const stopped: EnvironmentEvent = { type: 'EnvironmentStopped', data: ref };
const deleted: EnvironmentEvent = { type: 'EnvironmentDeleted', data: ref };
const create = (name: string, externalUrl: string | null = null): EnvironmentCommand => ({ type: 'CreateEnvironment', projectId: PROJECT, name, externalUrl, slugSuffix: 'abc123' });

describe('environment slug (Environment#generate_slug)', () => {
  it.each([
    ['production', 'production'],
    ['Review/Fix-Foo', 'review-fix-foo-xxxxxx'],
    ['123', 'env-123-xxxxxx'],
    ['review/fix', 'review-fix-xxxxxx'],
    ['a--b', 'a-b-xxxxxx'],
    ['staging-', 'staging-xxxxxx'],
    ['a-very-long-environment-name', 'a-very-long-envir-xxxxxx'],
    ['abcdefghijklmnopqrstuvwxyz', 'abcdefghijklmnopq-xxxxxx'],
    ['UPPER', 'upper-xxxxxx'],
  ])('%s → %s', (name, slug) => {
    expect(environmentSlug(name, 'xxxxxx')).toBe(slug);
  });

  it('keeps a clean name of 24 characters as it is, and adds the suffix from 25', () => {
    expect(environmentSlug('a'.repeat(24), 'xxxxxx')).toBe('a'.repeat(24));
    expect(environmentSlug('a'.repeat(25), 'xxxxxx')).toBe(`${'a'.repeat(17)}-xxxxxx`);
  });
});

describe('environments decider', () => {
  it('names one stream per environment', () => {
    expect(environmentStreamId(ID)).toBe('environment-4');
  });

  describe('CreateEnvironment', () => {
    it('creates an available environment with its slug', () => {
      on(ID).given().when(create('Review/Fix-Foo', 'https://review.example.com')).then([
        { type: 'EnvironmentCreated', data: { ...ref, name: 'Review/Fix-Foo', slug: 'review-fix-foo-abc123', external_url: 'https://review.example.com' } },
      ]);
      expect(on(ID).given(created()).state.environment).toMatchObject({ state: 'available', slug: 'production' });
    });

    it('stores a blank external_url as none', () => {
      on(ID).given().when(create('production', '')).then([created('production', null)]);
    });

    it("validates the name as GitLab's model does", () => {
      const format = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', and spaces, but it cannot start or end with '/'";
      on(ID).given().when(create('')).then(rejected('invalid', { fields: { name: ["can't be blank", format] } }));
      on(ID).given().when(create('  ')).then(rejected('invalid', { fields: { name: ["can't be blank"] } }));
      for (const name of ['/review', 'review/', 'a*b', 'é', 'a\nb']) on(ID).given().when(create(name)).then(rejected('invalid', { fields: { name: [format] } }));
      for (const name of ['review/app', '${CI_COMMIT_REF_NAME}', 'a b.c_d-e']) expect(() => environmentDecider.decide(create(name), environmentDecider.initialState(ID))).not.toThrow();
      on(ID).given().when(create('a'.repeat(256))).then(rejected('invalid', { fields: { name: ['is too long (maximum is 255 characters)'] } }));
    });

    it('validates external_url (http or https, absolute) after the name', () => {
      on(ID).given().when(create('x', 'ftp://example.com')).then(rejected('invalid', { fields: { external_url: ['is blocked: Only allowed schemes are http, https'] } }));
      on(ID).given().when(create('x', 'not a url')).then(rejected('invalid', { fields: { external_url: ['is blocked: URI is invalid'] } }));
      on(ID).given().when(create('/x', 'nope')).then(rejected('invalid', { fields: { name: [expect.stringContaining('can contain only')], external_url: ['is blocked: URI is invalid'] } }));
    });
  });

  describe('UpdateEnvironment', () => {
    it('records what changed, and nothing when nothing did', () => {
      on(ID).given(created()).when({ type: 'UpdateEnvironment', name: 'prod', externalUrl: 'https://prod.example.com' }).then([
        { type: 'EnvironmentUpdated', data: { ...ref, changes: { name: 'prod', external_url: 'https://prod.example.com' } } },
      ]);
      on(ID).given(created('production', 'https://x.example.com')).when({ type: 'UpdateEnvironment', externalUrl: '' }).then([
        { type: 'EnvironmentUpdated', data: { ...ref, changes: { external_url: null } } },
      ]);
      on(ID).given(created()).when({ type: 'UpdateEnvironment', name: 'production' }).then([]);
      on(ID).given(created()).when({ type: 'UpdateEnvironment' }).then([]);
    });

    it('keeps the slug when the name changes', () => {
      const state = on(ID).given(created(), { type: 'EnvironmentUpdated', data: { ...ref, changes: { name: 'prod' } } }).state;
      expect(state.environment).toMatchObject({ name: 'prod', slug: 'production' });
    });

    it('validates the new name', () => {
      on(ID).given(created()).when({ type: 'UpdateEnvironment', name: 'a/' }).then(rejected('invalid', { fields: { name: [expect.stringContaining('cannot start or end')] } }));
    });
  });

  describe('state machine: available → stopped', () => {
    it('stops an available environment', () => {
      on(ID).given(created()).when({ type: 'StopEnvironment' }).then([stopped]);
      expect(on(ID).given(created(), stopped).state.environment?.state).toBe('stopped');
    });

    it('stops a stopped environment without an event (Environment#stop_with_action!)', () => {
      on(ID).given(created(), stopped).when({ type: 'StopEnvironment' }).then([]);
    });

    it('deletes an environment in either state', () => {
      on(ID).given(created()).when({ type: 'DeleteEnvironment' }).then([deleted]);
      on(ID).given(created(), stopped).when({ type: 'DeleteEnvironment' }).then([deleted]);
    });

    it('knows no environment before its creation or after its deletion', () => {
      for (const command of [{ type: 'StopEnvironment' }, { type: 'DeleteEnvironment' }, { type: 'UpdateEnvironment', name: 'x' }] as EnvironmentCommand[]) {
        on(ID).given().when(command).then(rejected('not_found', { record: true }));
        on(ID).given(created(), deleted).when(command).then(rejected('not_found', { record: true }));
      }
    });
  });

  describe('claims', () => {
    it('holds the name and the slug within the project, and moves the name on a rename', () => {
      const before = on(ID).given(created()).state;
      expect(environmentClaims(created(), environmentDecider.initialState(ID)).acquire.map((c) => c.key)).toEqual(['9/production', '9/production']);
      const renamed = environmentClaims({ type: 'EnvironmentUpdated', data: { ...ref, changes: { name: 'prod' } } }, before);
      expect(renamed.acquire.map((c) => `${c.kind} ${c.key}`)).toEqual(['environment_name 9/prod']);
      expect(renamed.release.map((c) => `${c.kind} ${c.key}`)).toEqual(['environment_name 9/production']);
      expect(environmentClaims(deleted, before).release.map((c) => c.kind)).toEqual(['environment_name', 'environment_slug']);
    });
  });
});
