import type { Config } from '../../config.js';
import { HUMAN_ACCESS_LEVELS, type AccessKind } from '../../domain/protected-branches.js';
import { licensed } from '../../domain/policy/licensed.js';
import type { RuleView } from '../../projections/protected-branches/queries.js';
import type { ProtectedBranchRow } from '../../projections/protected-branches/tables.js';

/**
 * Entities::ProtectedRefAccess: access_level and its description (the user's or group's
 * name for their rules); EE adds user_id and group_id (protected_refs_for_users).
 */
function toAccessLevel(rule: RuleView, config: Config) {
  const out: Record<string, unknown> = {
    access_level: rule.access_level,
    access_level_description: rule.user_id !== null || rule.group_id !== null ? rule.holder_name : (HUMAN_ACCESS_LEVELS[rule.access_level] ?? null),
  };
  if (licensed(config.plan, 'protected_refs_for_users')) {
    out.user_id = rule.user_id;
    out.group_id = rule.group_id;
  }
  return out;
}

/**
 * Entities::ProtectedBranch (GitLab 12): name, push and merge access levels; EE adds
 * unprotect_access_levels and code_owner_approval_required (under every licence).
 */
export function toProtectedBranch(row: ProtectedBranchRow, rules: readonly RuleView[], config: Config) {
  const of = (kind: AccessKind) => rules.filter((r) => r.protected_branch_id === row.id && r.kind === kind).map((r) => toAccessLevel(r, config));
  const out: Record<string, unknown> = { name: row.name, push_access_levels: of('push'), merge_access_levels: of('merge') };
  if (licensed(config.plan, 'ee')) {
    out.unprotect_access_levels = of('unprotect');
    out.code_owner_approval_required = row.code_owner_approval_required;
  }
  return out;
}
