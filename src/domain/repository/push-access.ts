import { ACCESS } from '../access.js';
import type { AccessKind } from '../protected-branches.js';

/**
 * Who may push to (or merge into) a branch: GitLab's ProtectedRef matching and
 * Gitlab::UserAccess#can_push_to_branch? over the project's protected branches.
 */

export interface ProtectedRefRule {
  readonly kind: AccessKind;
  readonly access_level: number;
  readonly user_id: number | null;
  readonly group_id: number | null;
}

export interface ProtectedRef {
  readonly name: string;
  readonly rules: readonly ProtectedRefRule[];
}

export interface Pusher {
  readonly userId: number;
  readonly isAdmin: boolean;
  /** The user's level on the project (team.max_member_access), null for none. */
  readonly role: number | null;
  /** Whether the project grants push_code (developer or above, repository on, not archived). */
  readonly canPushCode: boolean;
  /** Of the groups the rules name, those the user is a member of. */
  readonly groupIds: ReadonlySet<number>;
}

/**
 * Gitlab::ProtectedRefMatcher: an exact name, or a wildcard where `*` matches anything
 * (slashes too). Matched without a regular expression: the text between the stars must
 * appear in order, the first piece at the start and the last at the end, and taking each
 * middle piece at its leftmost place is always right — so a pattern made of many stars costs
 * one scan of the name, not the polynomial backtracking of a `.*?` per star.
 */
export function protectedRefMatches(pattern: string, branch: string): boolean {
  if (!pattern.includes('*')) return pattern === branch;
  const pieces = pattern.split('*');
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  if (branch.length < first.length + last.length || !branch.startsWith(first) || !branch.endsWith(last)) return false;
  const end = branch.length - last.length;
  let at = first.length;
  for (const piece of pieces.slice(1, -1)) {
    if (piece === '') continue;
    const found = branch.indexOf(piece, at);
    if (found < 0 || found + piece.length > end) return false;
    at = found + piece.length;
  }
  return true;
}

export const matchingRefs = (refs: readonly ProtectedRef[], branch: string) => refs.filter((ref) => protectedRefMatches(ref.name, branch));

/** ProtectedRefAccess#check_access (EE: a user or group rule names who it lets in); "No one" lets nobody in. */
function allows(rule: ProtectedRefRule, who: Pusher): boolean {
  if (rule.user_id !== null) return rule.user_id === who.userId && who.canPushCode;
  if (rule.group_id !== null) return who.groupIds.has(rule.group_id) && who.canPushCode;
  if (rule.access_level === 0) return false;
  if (who.isAdmin) return true;
  return who.canPushCode && (who.role ?? ACCESS.NONE) >= rule.access_level;
}

/** Can the user push to (`push`) or merge into (`merge`) the branch? */
export function canAccessBranch(kind: AccessKind, branch: string, refs: readonly ProtectedRef[], who: Pusher): boolean {
  const matching = matchingRefs(refs, branch);
  if (matching.length === 0) return who.canPushCode;
  return matching.some((ref) => ref.rules.some((rule) => rule.kind === kind && allows(rule, who)));
}

/** ProtectedBranch.developers_can?: a matching protected branch gives developers the access. */
export function developersCan(kind: AccessKind, branch: string, refs: readonly ProtectedRef[]): boolean {
  return matchingRefs(refs, branch).some((ref) => ref.rules.some((rule) => rule.kind === kind && rule.access_level === ACCESS.DEVELOPER));
}
