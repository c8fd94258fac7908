import type { FieldErrors } from '../errors.js';

/**
 * GitLab EE 12's validations of a feature flag (Operations::FeatureFlag), of its scopes
 * (Operations::FeatureFlagScope with HasEnvironmentScope) and of their strategies
 * (FeatureFlagStrategiesValidator), with GitLab's messages.
 */

// ───────────────────────────── Flags ─────────────────────────────

/** Gitlab::Regex.feature_flag_regex. */
const NAME_FORMAT = /^[a-z]([-_a-z0-9]*[a-z0-9])?$/;
const NAME_FORMAT_MESSAGE = "can contain only lowercase letters, digits, '_' and '-'. Must start with a letter, and cannot end with '-' or '_'";
const DESCRIPTION_MAX = 255;

/** `validates :name, presence, length: 2..63, format`, then `validates :description, length: 0..255`. */
export function flagErrors(name: string, description: string | null): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  const names: string[] = [];
  if (name.trim() === '') names.push("can't be blank");
  if (name.length < 2) names.push('is too short (minimum is 2 characters)');
  if (name.length > 63) names.push('is too long (maximum is 63 characters)');
  if (!NAME_FORMAT.test(name)) names.push(NAME_FORMAT_MESSAGE);
  if (names.length > 0) errors.name = names;
  if (description !== null && description.length > DESCRIPTION_MAX) errors.description = [`is too long (maximum is ${DESCRIPTION_MAX} characters)`];
  return errors;
}

// ───────────────────────────── Environment scopes ─────────────────────────────

/** Gitlab::Regex.environment_scope_regex (EE): the environment name characters and '*'. */
const SCOPE_FORMAT = /^[a-zA-Z0-9_/${}. *-]+$/;
const SCOPE_FORMAT_MESSAGE = "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces";
/** The column is a varchar(255) in GitLab; a longer one fails there at the database. */
const SCOPE_MAX = 255;

export const DEFAULT_SCOPE = '*';

/** HasEnvironmentScope#environment_scope=: the value is stripped before it is validated and stored. */
export const normalizeEnvironmentScope = (scope: string) => scope.trim();

/** `validates :environment_scope, presence: true, format: …` (HasEnvironmentScope). */
export function environmentScopeErrors(scope: string): string[] {
  const errors: string[] = [];
  if (scope === '') errors.push("can't be blank");
  if (scope.length > SCOPE_MAX) errors.push(`is too long (maximum is ${SCOPE_MAX} characters)`);
  if (!SCOPE_FORMAT.test(scope)) errors.push(SCOPE_FORMAT_MESSAGE);
  return errors;
}

/** The uniqueness message of a scope: `message: '(%{value}) has already been taken'`. */
export const scopeTakenMessage = (scope: string) => `(${scope}) has already been taken`;

// ───────────────────────────── Strategies ─────────────────────────────

export type Strategy = Readonly<Record<string, unknown>>;

/** The strategy of a scope nobody gave one (the column's default). */
export const DEFAULT_STRATEGIES: readonly Strategy[] = [{ name: 'default', parameters: {} }];

/** FeatureFlagStrategiesValidator::STRATEGIES: each strategy's parameter keys, sorted. */
const STRATEGIES: Readonly<Record<string, readonly string[]>> = {
  default: [],
  gradualRolloutUserId: ['groupId', 'percentage'],
  userWithId: ['userIds'],
};
const USERID_MAX_LENGTH = 256;

const isHash = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const hasStrategy = (name: unknown): name is string => typeof name === 'string' && Object.hasOwn(STRATEGIES, name);

/**
 * FeatureFlagStrategiesValidator#validate_each: an array of hashes; for each, the name,
 * then the parameters' type, keys and values, stopping at the first failure of the first
 * three. The messages, in GitLab's order (repeated for each failing strategy, as Rails does).
 */
export function strategiesErrors(strategies: unknown): string[] {
  if (!Array.isArray(strategies) || !strategies.every(isHash)) return ['must be an array of strategy hashes'];
  const errors: string[] = [];
  for (const strategy of strategies) {
    const { name, parameters } = strategy;
    if (!hasStrategy(name)) {
      errors.push('strategy name is invalid');
      continue;
    }
    if (!isHash(parameters)) {
      errors.push('parameters are invalid');
      continue;
    }
    const keys = Object.keys(parameters).sort();
    const expected = STRATEGIES[name]!;
    if (keys.length !== expected.length || keys.some((key, i) => key !== expected[i])) {
      errors.push('parameters are invalid');
      continue;
    }
    if (name === 'gradualRolloutUserId') {
      const { percentage, groupId } = parameters;
      if (typeof percentage !== 'string' || !/^(?:[1-9]?[0-9]|100)$/.test(percentage)) errors.push('percentage must be a string between 0 and 100 inclusive');
      if (typeof groupId !== 'string' || !/^[a-z]{1,32}$/.test(groupId)) errors.push('groupId parameter is invalid');
    } else if (name === 'userWithId' && !validUserIds(parameters.userIds)) {
      errors.push(`userIds must be a string of unique comma separated values each ${USERID_MAX_LENGTH} characters or less`);
    }
  }
  return errors;
}

/**
 * user_with_id_parameters_validation: no tab or line break, no empty value between commas,
 * unique ids, each present, without surrounding spaces and at most 256 characters. Ruby's
 * String#split drops trailing empty fields ("a,b," is a and b).
 */
function validUserIds(userIds: unknown): boolean {
  if (typeof userIds !== 'string' || /[\n\r\t]|,,/.test(userIds)) return false;
  const ids = userIds.split(',');
  while (ids.length > 0 && ids[ids.length - 1] === '') ids.pop();
  return new Set(ids).size === ids.length && ids.every((id) => id.trim() !== '' && id.trim() === id && id.length <= USERID_MAX_LENGTH);
}

/** Appends `messages` under `field`, keeping Rails' order of first appearance. */
export function addErrors(errors: Record<string, string[]>, field: string, messages: readonly string[]): void {
  if (messages.length === 0) return;
  (errors[field] ??= []).push(...messages);
}

export const hasErrors = (errors: FieldErrors) => Object.keys(errors).length > 0;
