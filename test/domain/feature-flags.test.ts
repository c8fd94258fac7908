import { describe, expect, it } from 'vitest';
import { featureFlagAuditMessage, rubyInspect } from '../../src/domain/feature-flags/audit-messages.js';
import { type FeatureFlagCommand, featureFlagClaims, featureFlagDecider, type ScopeInput } from '../../src/domain/feature-flags/decider.js';
import type { FeatureFlagEvent, ScopeData } from '../../src/domain/feature-flags/events.js';
import { effectiveScope, matchRank } from '../../src/domain/feature-flags/matching.js';
import { strategiesErrors } from '../../src/domain/feature-flags/rules.js';
import { deciderSpec, rejected } from '../support/decider.js';

const { on } = deciderSpec(featureFlagDecider);

const ID = 7;
const PROJECT = 3;
const ref = { id: ID, project_id: PROJECT, name: 'awesome' };
const DEFAULT = [{ name: 'default', parameters: {} }];
const USERS = [{ name: 'userWithId', parameters: { userIds: 'a,b' } }];
const scope = (id: number, environment_scope: string, active = true, strategies: Record<string, unknown>[] = DEFAULT): ScopeData => ({ id, environment_scope, active, strategies });
const input = (environmentScope: string, active = true, strategies: unknown = DEFAULT): ScopeInput => ({ environmentScope, active, strategies });
const create = (extra: Partial<Extract<FeatureFlagCommand, { type: 'CreateFeatureFlag' }>> = {}): FeatureFlagCommand => ({
  type: 'CreateFeatureFlag',
  projectId: PROJECT,
  name: 'awesome',
  description: null,
  active: true,
  scopes: null,
  scopeIds: [11, 12, 13],
  ...extra,
});
const created = (scopes: ScopeData[] = [scope(11, '*')], extra: { description?: string | null; active?: boolean } = {}): FeatureFlagEvent => ({
  type: 'FeatureFlagCreated',
  data: { ...ref, description: null, active: true, scopes, ...extra },
});

// ───────────────────────────── Scope matching ─────────────────────────────

describe('the scope in effect for an environment (HasEnvironmentScope.on_environment)', () => {
  it.each([
    ['*', 'production', 0],
    ['production', 'production', 2],
    ['review/*', 'review/feature X', 1],
    ['review/*', 'review/', 1],
    ['review/*', 'review', null],
    ['*/production', 'eu/production', 1],
    ['re*ew/*', 'review/a', 1],
    ['Production', 'production', null],
    ['review_app', 'reviewXapp', null],
    ['review.app', 'reviewXapp', null],
    ['review/*', 'review/a\nb', 1],
    ['review/*', 'review/*', 2],
    ['a*a', 'a', null],
    ['a*a', 'aa', 1],
    ['*a*', 'bab', 1],
    ['a**b', 'ab', 1],
    ['*ab*ab', 'abab', 1],
    ['*aa*', 'aba', null],
    ['a*b*a', 'aba', 1],
    ['a*b*a', 'ab', null],
  ] as const)('%j on %j ranks %j', (pattern, environment, rank) => {
    expect(matchRank(pattern, environment)).toBe(rank);
  });

  const scopes = [scope(1, '*'), scope(2, 'review/*'), scope(3, 'review/app-*'), scope(4, 'review/app-1'), scope(5, 'staging')];
  it.each([
    ['review/app-1', 4],
    ['review/app-2', 3],
    ['review/other', 2],
    ['staging', 5],
    ['production', 1],
    ['', 1],
  ] as const)('%j gets scope %i: the exact name, else the longest pattern, else *', (environment, id) => {
    expect(effectiveScope(scopes, environment)?.id).toBe(id);
  });

  it('takes the newer of two patterns of one length, and nothing without a match', () => {
    expect(effectiveScope([scope(1, 'a*'), scope(2, '*b')], 'ab')?.id).toBe(2);
    expect(effectiveScope([scope(1, 'staging')], 'production')).toBeUndefined();
  });
});

// ───────────────────────────── Strategies ─────────────────────────────

describe('strategies (FeatureFlagStrategiesValidator)', () => {
  const USER_IDS = 'userIds must be a string of unique comma separated values each 256 characters or less';
  it.each([
    [[], []],
    [DEFAULT, []],
    [[{ name: 'gradualRolloutUserId', parameters: { groupId: 'default', percentage: '0' } }], []],
    [[{ name: 'gradualRolloutUserId', parameters: { percentage: '100', groupId: 'abc' } }], []],
    [[{ name: 'userWithId', parameters: { userIds: 'a,b,user:1' } }], []],
    [[{ name: 'userWithId', parameters: { userIds: 'a,b,' } }], []],
    [{ name: 'default', parameters: {} }, ['must be an array of strategy hashes']],
    [[1], ['must be an array of strategy hashes']],
    ['default', ['must be an array of strategy hashes']],
    [[{ name: 'flexibleRollout', parameters: {} }], ['strategy name is invalid']],
    [[{ name: 'toString', parameters: {} }], ['strategy name is invalid']],
    [[{ name: 'default' }], ['parameters are invalid']],
    [[{ name: 'default', parameters: [] }], ['parameters are invalid']],
    [[{ name: 'default', parameters: { a: 1 } }], ['parameters are invalid']],
    [[{ name: 'gradualRolloutUserId', parameters: { percentage: '50' } }], ['parameters are invalid']],
    [[{ name: 'gradualRolloutUserId', parameters: { groupId: 'default', percentage: '101' } }], ['percentage must be a string between 0 and 100 inclusive']],
    [[{ name: 'gradualRolloutUserId', parameters: { groupId: 'default', percentage: 50 } }], ['percentage must be a string between 0 and 100 inclusive']],
    [[{ name: 'gradualRolloutUserId', parameters: { groupId: 'default', percentage: '05' } }], ['percentage must be a string between 0 and 100 inclusive']],
    [[{ name: 'gradualRolloutUserId', parameters: { groupId: 'Default', percentage: '-1' } }], ['percentage must be a string between 0 and 100 inclusive', 'groupId parameter is invalid']],
    [[{ name: 'gradualRolloutUserId', parameters: { groupId: 'a'.repeat(33), percentage: '5' } }], ['groupId parameter is invalid']],
    [[{ name: 'userWithId', parameters: { userIds: 'a,,b' } }], [USER_IDS]],
    [[{ name: 'userWithId', parameters: { userIds: 'a,a' } }], [USER_IDS]],
    [[{ name: 'userWithId', parameters: { userIds: 'a, b' } }], [USER_IDS]],
    [[{ name: 'userWithId', parameters: { userIds: 'a\tb' } }], [USER_IDS]],
    [[{ name: 'userWithId', parameters: { userIds: ',a' } }], [USER_IDS]],
    [[{ name: 'userWithId', parameters: { userIds: 'x'.repeat(257) } }], [USER_IDS]],
    [[{ name: 'userWithId', parameters: { userIds: ['a'] } }], [USER_IDS]],
    [[{ name: 'nope', parameters: {} }, { name: 'default', parameters: { x: 1 } }], ['strategy name is invalid', 'parameters are invalid']],
  ])('%j → %j', (strategies, errors) => {
    expect(strategiesErrors(strategies)).toEqual(errors);
  });
});

// ───────────────────────────── Decider ─────────────────────────────

describe('CreateFeatureFlag', () => {
  it('gives a flag without scopes the * scope, active as the flag, with the default strategy', () => {
    on(ID).given().when(create()).then([created()]);
    on(ID).given().when(create({ active: false, description: 'd' })).then([created([scope(11, '*', false)], { active: false, description: 'd' })]);
    on(ID).given().when(create({ scopes: [] })).then([created()]);
  });

  it('keeps the scopes given, * first, their names stripped', () => {
    on(ID)
      .given()
      .when(create({ scopes: [input('*', false), input(' production ', true, USERS)] }))
      .then([created([scope(11, '*', false), scope(12, 'production', true, USERS)])]);
  });

  it("refuses with the model's errors, in Rails' order", () => {
    on(ID).given().when(create({ name: 'A' })).then(
      rejected('invalid', {
        fields: { name: ['is too short (minimum is 2 characters)', "can contain only lowercase letters, digits, '_' and '-'. Must start with a letter, and cannot end with '-' or '_'"] },
      }),
    );
    on(ID).given().when(create({ name: '' })).then(rejected('invalid', { fields: { name: ["can't be blank", 'is too short (minimum is 2 characters)', expect.any(String)] } }));
    on(ID).given().when(create({ name: `a${'b'.repeat(63)}` })).then(rejected('invalid', { fields: { name: ['is too long (maximum is 63 characters)'] } }));
    on(ID).given().when(create({ description: 'd'.repeat(256) })).then(rejected('invalid', { fields: { description: ['is too long (maximum is 255 characters)'] } }));
    on(ID)
      .given()
      .when(create({ scopes: [input('production'), input('*'), input('*', true, {}), input('bad!'), input('')] }))
      .then(
        rejected('invalid', {
          fields: {
            default_scope: ['has to be the first element'],
            'scopes.environment_scope': [
              '(*) has already been taken',
              "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces",
              "can't be blank",
              "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces",
            ],
            'scopes.strategies': ['must be an array of strategy hashes'],
          },
        }),
      );
  });
});

describe('scopes of a flag', () => {
  const flag = created([scope(11, '*'), scope(12, 'staging', false)]);

  it('adds a scope; refuses a taken environment scope or bad strategies', () => {
    on(ID).given(flag).when({ type: 'CreateFeatureFlagScope', scopeId: 20, scope: input('review/*', true, USERS) }).then([
      { type: 'FeatureFlagScopeCreated', data: { ...ref, scope: scope(20, 'review/*', true, USERS) } },
    ]);
    on(ID).given(flag).when({ type: 'CreateFeatureFlagScope', scopeId: 20, scope: input('staging ') }).then(
      rejected('invalid', { fields: { 'scopes.environment_scope': ['(staging) has already been taken'] } }),
    );
    on(ID).given(flag).when({ type: 'CreateFeatureFlagScope', scopeId: 20, scope: input('x', true, [{ name: 'x' }]) }).then(
      rejected('invalid', { fields: { 'scopes.strategies': ['strategy name is invalid'] } }),
    );
  });

  it('updates what changed, with the values before; nothing when nothing changes', () => {
    on(ID).given(flag).when({ type: 'UpdateFeatureFlagScope', environmentScope: 'staging', active: true, strategies: USERS }).then([
      {
        type: 'FeatureFlagScopeUpdated',
        data: { ...ref, scope_id: 12, environment_scope: 'staging', changes: { active: true, strategies: USERS }, previous: { active: false, strategies: DEFAULT } },
      },
    ]);
    on(ID).given(flag).when({ type: 'UpdateFeatureFlagScope', environmentScope: 'staging', active: false, strategies: DEFAULT }).then([]);
    on(ID).given(flag).when({ type: 'UpdateFeatureFlagScope', environmentScope: 'production', active: true }).then(rejected('not_found', { record: true }));
  });

  it('deletes a scope but never *', () => {
    on(ID).given(flag).when({ type: 'DeleteFeatureFlagScope', environmentScope: 'staging' }).then([
      { type: 'FeatureFlagScopeDeleted', data: { ...ref, scope_id: 12, environment_scope: 'staging' } },
    ]);
    on(ID).given(flag).when({ type: 'DeleteFeatureFlagScope', environmentScope: '*' }).then(rejected('invalid', { fields: { base: ['default scope cannot be destroyed'] } }));
    const after = on(ID).given(flag).when({ type: 'DeleteFeatureFlagScope', environmentScope: 'staging' }).state();
    expect(after.flag!.scopes.map((s) => s.environment_scope)).toEqual(['*']);
  });
});

describe('UpdateFeatureFlag and DeleteFeatureFlag', () => {
  it("renames, and a change of `active` is the * scope's too (update_default_scope)", () => {
    const flag = created([scope(11, '*'), scope(12, 'staging', true)]);
    const update: FeatureFlagCommand = { type: 'UpdateFeatureFlag', name: 'renamed', active: false };
    const events: FeatureFlagEvent[] = [{ type: 'FeatureFlagUpdated', data: { ...ref, name: 'renamed', changes: { name: 'renamed', active: false }, previous: { name: 'awesome', active: true } } }];
    on(ID).given(flag).when(update).then(events);
    const state = on(ID).given(flag).when(update).state();
    expect(state.flag!.scopes.map((s) => s.active)).toEqual([false, true]);
    expect(featureFlagClaims(events[0]!, on(ID).given(flag).state)).toEqual({
      acquire: [{ kind: 'feature_flag_name', key: '3/renamed', conflictMessage: expect.any(String) }],
      release: [{ kind: 'feature_flag_name', key: '3/awesome', conflictMessage: expect.any(String) }],
    });
    on(ID).given(flag).when({ type: 'UpdateFeatureFlag', name: 'awesome' }).then([]);
    on(ID).given(flag).when({ type: 'UpdateFeatureFlag', name: '-x' }).then(rejected('invalid'));
  });

  it('deletes, releasing the name; a deleted flag is not found', () => {
    const deleted: FeatureFlagEvent = { type: 'FeatureFlagDeleted', data: ref };
    on(ID).given(created()).when({ type: 'DeleteFeatureFlag' }).then([deleted]);
    on(ID).given(created(), deleted).when({ type: 'DeleteFeatureFlag' }).then(rejected('not_found', { record: true }));
    expect(featureFlagClaims(deleted, on(ID).given(created()).state).release).toEqual([{ kind: 'feature_flag_name', key: '3/awesome', conflictMessage: expect.any(String) }]);
  });
});

// ───────────────────────────── Audit messages ─────────────────────────────

describe("the audit events' custom messages (FeatureFlags services)", () => {
  it('reads as GitLab 12 writes them', () => {
    expect(rubyInspect([{ name: 'userWithId', parameters: { userIds: 'a,"b' } }])).toBe('[{"name"=>"userWithId", "parameters"=>{"userIds"=>"a,\\"b"}}]');
    expect(featureFlagAuditMessage(created())).toBe(
      'Created feature flag <strong>awesome</strong> with description <strong>""</strong>. Created rule <strong>*</strong> and set it as <strong>active</strong> with strategies <strong>[{"name"=>"default", "parameters"=>{}}]</strong>.',
    );
    expect(
      featureFlagAuditMessage({ type: 'FeatureFlagUpdated', data: { ...ref, changes: { description: 'new', active: false }, previous: { description: null, active: true } } }),
    ).toBe('Updated feature flag <strong>awesome</strong>. Updated description from <strong>""</strong> to <strong>"new"</strong>. Updated active from <strong>"true"</strong> to <strong>"false"</strong>.');
    expect(
      featureFlagAuditMessage({
        type: 'FeatureFlagScopeUpdated',
        data: { ...ref, scope_id: 1, environment_scope: 'staging', changes: { active: true, strategies: USERS }, previous: { active: false, strategies: DEFAULT } },
      }),
    ).toBe(
      'Updated feature flag <strong>awesome</strong>. Updated rule <strong>staging</strong> active state from <strong>false</strong> to <strong>true</strong> strategies from <strong>[{"name"=>"default", "parameters"=>{}}]</strong> to <strong>[{"name"=>"userWithId", "parameters"=>{"userIds"=>"a,b"}}]</strong>.',
    );
    expect(featureFlagAuditMessage({ type: 'FeatureFlagScopeDeleted', data: { ...ref, scope_id: 1, environment_scope: 'staging' } })).toBe(
      'Updated feature flag <strong>awesome</strong>. Deleted rule <strong>staging</strong>.',
    );
    expect(featureFlagAuditMessage({ type: 'FeatureFlagDeleted', data: ref })).toBe('Deleted feature flag <strong>awesome</strong>.');
  });
});
