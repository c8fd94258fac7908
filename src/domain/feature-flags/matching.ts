import { wildcardMatches } from '../wildcard.js';
import { DEFAULT_SCOPE } from './rules.js';

/**
 * Which scope of a flag applies to an environment: GitLab's HasEnvironmentScope.on_environment
 * as Operations::FeatureFlagScope.for_unleash_client orders it. A scope matches when it is
 * `*`, the environment's name, or a pattern whose `*` stand for any characters (SQL LIKE,
 * case-sensitive, every other character literal). Of the matches, the exact name wins over
 * a pattern, and a pattern over `*`.
 */

export interface MatchableScope {
  readonly id: number;
  readonly environment_scope: string;
}

/** 2 exact, 1 pattern, 0 `*`; null when the scope does not match `environment`. */
export function matchRank(scope: string, environment: string): number | null {
  if (scope === DEFAULT_SCOPE) return 0;
  if (scope === environment) return 2;
  return wildcardMatches(scope, environment) ? 1 : null;
}

/**
 * The scope in effect for `environment`, or undefined when none matches (a flag always has
 * `*`). GitLab leaves the order of two matching patterns to the database; forgelog takes the
 * longer pattern (the more specific), then the newer scope.
 */
export function effectiveScope<S extends MatchableScope>(scopes: readonly S[], environment: string): S | undefined {
  let best: { scope: S; rank: number } | undefined;
  for (const scope of scopes) {
    const rank = matchRank(scope.environment_scope, environment);
    if (rank === null) continue;
    if (!best || rank > best.rank || (rank === best.rank && moreSpecific(scope, best.scope))) best = { scope, rank };
  }
  return best?.scope;
}

const moreSpecific = (a: MatchableScope, b: MatchableScope) =>
  a.environment_scope.length > b.environment_scope.length || (a.environment_scope.length === b.environment_scope.length && a.id > b.id);
