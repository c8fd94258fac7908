import { type ClaimChanges, type ClaimRefusal, type Decider, NO_CLAIMS, unhandled } from '../decider.js';
import { invalid, recordNotFound } from '../errors.js';
import type { FeatureFlagEvent, ScopeData } from './events.js';
import {
  addErrors,
  DEFAULT_SCOPE,
  DEFAULT_STRATEGIES,
  environmentScopeErrors,
  flagErrors,
  hasErrors,
  normalizeEnvironmentScope,
  scopeTakenMessage,
  strategiesErrors,
  type Strategy,
} from './rules.js';

// ───────────────────────────── State ─────────────────────────────

export interface FeatureFlagRecord {
  readonly projectId: number;
  readonly name: string;
  readonly description: string | null;
  readonly active: boolean;
  /** In creation order. */
  readonly scopes: readonly ScopeData[];
}

export interface FeatureFlagState {
  readonly id: number;
  /** null: never created, or deleted. */
  readonly flag: FeatureFlagRecord | null;
}

// ───────────────────────────── Commands ─────────────────────────────

/** A scope as the API gives it: `strategies` is whatever JSON came (validated here). */
export interface ScopeInput {
  readonly environmentScope: string;
  readonly active: boolean;
  readonly strategies: unknown;
}

export type FeatureFlagCommand =
  /** `scopeIds`: one id per scope given, or one for the `*` scope built when none is. */
  | {
      readonly type: 'CreateFeatureFlag';
      readonly projectId: number;
      readonly name: string;
      readonly description: string | null;
      readonly active: boolean;
      readonly scopes: readonly ScopeInput[] | null;
      readonly scopeIds: readonly number[];
    }
  | { readonly type: 'UpdateFeatureFlag'; readonly name?: string; readonly description?: string | null; readonly active?: boolean }
  | { readonly type: 'DeleteFeatureFlag' }
  | { readonly type: 'CreateFeatureFlagScope'; readonly scopeId: number; readonly scope: ScopeInput }
  | { readonly type: 'UpdateFeatureFlagScope'; readonly environmentScope: string; readonly active?: boolean; readonly strategies?: unknown }
  | { readonly type: 'DeleteFeatureFlagScope'; readonly environmentScope: string };

// ───────────────────────────── Rules ─────────────────────────────

/**
 * A new scope's errors under GitLab's nested-attribute keys (`scopes.environment_scope`,
 * `scopes.strategies`), taken against the scopes already there and those before it in the
 * same request (GitLab's unique index refused those with a 500; here it is the model's message).
 */
function newScopeErrors(errors: Record<string, string[]>, input: ScopeInput, taken: Set<string>): void {
  const scope = normalizeEnvironmentScope(input.environmentScope);
  addErrors(errors, 'scopes.environment_scope', environmentScopeErrors(scope));
  if (taken.has(scope)) addErrors(errors, 'scopes.environment_scope', [scopeTakenMessage(scope)]);
  taken.add(scope);
  addErrors(errors, 'scopes.strategies', strategiesErrors(input.strategies));
}

const asStrategies = (value: unknown) => value as Strategy[];

function findScope(flag: FeatureFlagRecord, environmentScope: string): ScopeData {
  const scope = flag.scopes.find((s) => s.environment_scope === environmentScope);
  // feature_flag.scopes.find_by_environment_scope!: "404 Not found".
  if (!scope) throw recordNotFound('FeatureFlagScope');
  return scope;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

// ───────────────────────────── Decider ─────────────────────────────

function evolve(state: FeatureFlagState, event: FeatureFlagEvent): FeatureFlagState {
  const { flag } = state;
  switch (event.type) {
    case 'FeatureFlagCreated': {
      const { project_id, name, description, active, scopes } = event.data;
      return { ...state, flag: { projectId: project_id, name, description, active, scopes } };
    }
    case 'FeatureFlagUpdated': {
      if (!flag) return state;
      const { changes } = event.data;
      // Operations::FeatureFlag#update_default_scope: the flag's `active` is its `*` scope's.
      const scopes =
        changes.active === undefined ? flag.scopes : flag.scopes.map((s) => (s.environment_scope === DEFAULT_SCOPE ? { ...s, active: changes.active! } : s));
      return { ...state, flag: { ...flag, ...changes, scopes } };
    }
    case 'FeatureFlagDeleted':
      return { ...state, flag: null };
    case 'FeatureFlagScopeCreated':
      return flag ? { ...state, flag: { ...flag, scopes: [...flag.scopes, event.data.scope] } } : state;
    case 'FeatureFlagScopeUpdated': {
      if (!flag) return state;
      const { scope_id, changes } = event.data;
      return { ...state, flag: { ...flag, scopes: flag.scopes.map((s) => (s.id === scope_id ? { ...s, ...changes } : s)) } };
    }
    case 'FeatureFlagScopeDeleted':
      return flag ? { ...state, flag: { ...flag, scopes: flag.scopes.filter((s) => s.id !== event.data.scope_id) } } : state;
    default:
      return unhandled(event);
  }
}

function decide(command: FeatureFlagCommand, state: FeatureFlagState): FeatureFlagEvent[] {
  const { id, flag } = state;
  if (command.type === 'CreateFeatureFlag') {
    // A new id each time: a second create on the stream is a defect of the caller.
    if (flag) throw new Error(`feature flag ${id} exists`);
    return [createFlag(id, command)];
  }
  if (!flag) throw recordNotFound('FeatureFlag');
  const ref = { id, project_id: flag.projectId, name: flag.name };
  switch (command.type) {
    case 'UpdateFeatureFlag': {
      const next = { name: command.name ?? flag.name, description: command.description === undefined ? flag.description : command.description };
      const errors = flagErrors(next.name, next.description);
      if (hasErrors(errors)) throw invalid(errors);
      const changes: Record<string, unknown> = {};
      const previous: Record<string, unknown> = {};
      for (const key of ['name', 'description', 'active'] as const) {
        const value = command[key];
        if (value !== undefined && value !== flag[key]) {
          changes[key] = value;
          previous[key] = flag[key];
        }
      }
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'FeatureFlagUpdated', data: { ...ref, name: next.name, changes, previous } }];
    }
    case 'DeleteFeatureFlag':
      return [{ type: 'FeatureFlagDeleted', data: ref }];
    case 'CreateFeatureFlagScope': {
      const errors: Record<string, string[]> = {};
      newScopeErrors(errors, command.scope, new Set(flag.scopes.map((s) => s.environment_scope)));
      if (hasErrors(errors)) throw invalid(errors);
      const { environmentScope, active, strategies } = command.scope;
      const scope = { id: command.scopeId, environment_scope: normalizeEnvironmentScope(environmentScope), active, strategies: asStrategies(strategies) };
      return [{ type: 'FeatureFlagScopeCreated', data: { ...ref, scope } }];
    }
    case 'UpdateFeatureFlagScope': {
      const scope = findScope(flag, command.environmentScope);
      if (command.strategies !== undefined) {
        const errors = strategiesErrors(command.strategies);
        if (errors.length > 0) throw invalid({ 'scopes.strategies': errors });
      }
      const changes: { active?: boolean; strategies?: Strategy[] } = {};
      const previous: { active?: boolean; strategies?: Strategy[] } = {};
      if (command.active !== undefined && command.active !== scope.active) {
        changes.active = command.active;
        previous.active = scope.active;
      }
      if (command.strategies !== undefined && !sameJson(command.strategies, scope.strategies)) {
        changes.strategies = asStrategies(command.strategies);
        previous.strategies = scope.strategies;
      }
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'FeatureFlagScopeUpdated', data: { ...ref, scope_id: scope.id, environment_scope: scope.environment_scope, changes, previous } }];
    }
    case 'DeleteFeatureFlagScope': {
      const scope = findScope(flag, command.environmentScope);
      // GitLab: before_destroy :prevent_destroy_default_scope raises ReadOnlyRecord (a 500 there).
      if (scope.environment_scope === DEFAULT_SCOPE) throw invalid({ base: ['default scope cannot be destroyed'] });
      return [{ type: 'FeatureFlagScopeDeleted', data: { ...ref, scope_id: scope.id, environment_scope: scope.environment_scope } }];
    }
    default:
      return unhandled(command);
  }
}

/**
 * FeatureFlags::CreateService: the flag's validations, then `first_default_scope` when scopes
 * are given (the first must be `*`), then each scope's; without scopes, the `*` scope with the
 * flag's `active` and the default strategy (`build_default_scope`).
 */
function createFlag(id: number, command: Extract<FeatureFlagCommand, { type: 'CreateFeatureFlag' }>): FeatureFlagEvent {
  const { projectId, name, description, active, scopes, scopeIds } = command;
  const errors = flagErrors(name, description);
  const given = scopes !== null && scopes.length > 0 ? scopes : null;
  if (given && normalizeEnvironmentScope(given[0]!.environmentScope) !== DEFAULT_SCOPE) addErrors(errors, 'default_scope', ['has to be the first element']);
  if (given) {
    const taken = new Set<string>();
    for (const scope of given) newScopeErrors(errors, scope, taken);
  }
  if (hasErrors(errors)) throw invalid(errors);
  const built: ScopeData[] = given
    ? given.map((s, i) => ({ id: scopeIds[i]!, environment_scope: normalizeEnvironmentScope(s.environmentScope), active: s.active, strategies: asStrategies(s.strategies) }))
    : [{ id: scopeIds[0]!, environment_scope: DEFAULT_SCOPE, active, strategies: [...DEFAULT_STRATEGIES] }];
  return { type: 'FeatureFlagCreated', data: { id, project_id: projectId, name, description, active, scopes: built } };
}

export const featureFlagDecider: Decider<FeatureFlagCommand, FeatureFlagEvent, FeatureFlagState, number> = {
  initialState: (id) => ({ id, flag: null }),
  evolve,
  decide,
};

// ───────────────────────────── Claims ─────────────────────────────

/** `validates :name, uniqueness: { scope: :project_id }`. */
const nameClaim = (projectId: number, name: string) => ({ kind: 'feature_flag_name', key: `${projectId}/${name}`, conflictMessage: 'Feature flag name has already been taken' });

/** A taken name is the model's error: `{"message":["Name has already been taken"]}`. */
export const featureFlagClaimRefusal: ClaimRefusal = () => invalid({ name: ['has already been taken'] });

export function featureFlagClaims(event: FeatureFlagEvent, before: FeatureFlagState): ClaimChanges {
  switch (event.type) {
    case 'FeatureFlagCreated':
      return { acquire: [nameClaim(event.data.project_id, event.data.name)], release: [] };
    case 'FeatureFlagUpdated': {
      const { name } = event.data.changes;
      if (name === undefined || !before.flag) return NO_CLAIMS;
      return { acquire: [nameClaim(event.data.project_id, name)], release: [nameClaim(event.data.project_id, before.flag.name)] };
    }
    case 'FeatureFlagDeleted':
      return before.flag ? { acquire: [], release: [nameClaim(event.data.project_id, before.flag.name)] } : NO_CLAIMS;
    default:
      return NO_CLAIMS;
  }
}
