import { ACCESS } from '../access.js';
import { wildcardMatches } from '../wildcard.js';
import type { AccessKind } from '../protected-branches.js';

/**
 * Who may write a branch: GitLab's ProtectedRef matching, Gitlab::UserAccess
 * (`can_push_to_branch?`, `can_merge_to_branch?`, `can_delete_branch?`) over the project's
 * protected branches, and Gitlab::Checks::BranchCheck — the pre-receive check Gitaly runs for
 * every ref a user writes (the branches API, the commits API, merges), whose refusal GitLab's
 * services answer with 400 and the check's message.
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
  /**
   * For a user without push_code, the branches open merge requests from this project (a fork)
   * let them push to (Project#branch_allows_collaboration?: `allow_collaboration`, and the
   * user may merge the merge request in its target). Absent: push_code was asked already.
   */
  readonly collaboration?: ReadonlySet<string>;
}

/** Gitlab::UserAccess#can_push_to_branch?'s first rule: push_code, or a branch a merge request lets the user collaborate on. */
const mayPushTo = (who: Pusher, branch: string) => who.canPushCode || (who.collaboration?.has(branch) ?? false);

/** Gitlab::ProtectedRefMatcher: an exact name, or a wildcard where `*` matches anything (slashes too). */
export const protectedRefMatches = (pattern: string, branch: string): boolean => wildcardMatches(pattern, branch);

export const matchingRefs = (refs: readonly ProtectedRef[], branch: string) => refs.filter((ref) => protectedRefMatches(ref.name, branch));

/** ProtectedBranch.protected?: does a rule's name or wildcard match the branch? */
export const isProtected = (refs: readonly ProtectedRef[], branch: string) => refs.some((ref) => protectedRefMatches(ref.name, branch));

/** The groups the rules name (a pusher's `groupIds` is their subset the user is a member of). */
export const ruleGroupIds = (refs: readonly ProtectedRef[]) => [...new Set(refs.flatMap((r) => r.rules.flatMap((rule) => (rule.group_id === null ? [] : [rule.group_id]))))];

/** ProtectedRefAccess#check_access (EE: a user or group rule names who it lets in); "No one" lets nobody in. */
function allows(rule: ProtectedRefRule, who: Pusher): boolean {
  if (rule.user_id !== null) return rule.user_id === who.userId && who.canPushCode;
  if (rule.group_id !== null) return who.groupIds.has(rule.group_id) && who.canPushCode;
  if (rule.access_level === 0) return false;
  if (who.isAdmin) return true;
  return who.canPushCode && (who.role ?? ACCESS.NONE) >= rule.access_level;
}

/**
 * Can the user push to (`push`) or merge into (`merge`) the branch? A protected branch's
 * rules all ask push_code, so collaboration reaches unprotected branches only, as GitLab's.
 */
export function canAccessBranch(kind: AccessKind, branch: string, refs: readonly ProtectedRef[], who: Pusher): boolean {
  const matching = matchingRefs(refs, branch);
  if (matching.length === 0) return kind === 'push' ? mayPushTo(who, branch) : who.canPushCode;
  return matching.some((ref) => ref.rules.some((rule) => rule.kind === kind && allows(rule, who)));
}

/** ProtectedBranch.developers_can?: a matching protected branch gives developers the access. */
export function developersCan(kind: AccessKind, branch: string, refs: readonly ProtectedRef[]): boolean {
  return matchingRefs(refs, branch).some((ref) => ref.rules.some((rule) => rule.kind === kind && rule.access_level === ACCESS.DEVELOPER));
}

// ───────────────────────────── The branch check ─────────────────────────────

/** Gitlab::GitAccess::ERROR_MESSAGES[:push_code], which Gitlab::Checks::PushCheck raises. */
export const PUSH_CODE_MESSAGE = 'You are not allowed to push code to this project.';

/** Gitlab::Checks::BranchCheck::ERROR_MESSAGES (12.x). */
export const BRANCH_CHECK_MESSAGES = {
  deleteDefaultBranch: 'The default branch of a project cannot be deleted.',
  forcePushProtectedBranch: 'You are not allowed to force push code to a protected branch on this project.',
  deleteProtectedBranch: 'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.',
  mergeProtectedBranch: 'You are not allowed to merge code into protected branches on this project.',
  pushProtectedBranch: 'You are not allowed to push code to protected branches on this project.',
  createProtectedBranch: 'You are not allowed to create protected branches on this project.',
  invalidCommitCreateProtectedBranch: 'You can only use an existing protected branch ref as the basis of a new protected branch.',
} as const;

/**
 * A ref write as the check sees it (always "from the web": the API writes through Gitaly's
 * user operations, so `updated_from_web?` holds).
 */
export type BranchChange =
  /** `fromProtectedBranch`: some protected branch contains the new head (safe_commit_for_new_protected_branch?). */
  | { readonly kind: 'create'; readonly branch: string; readonly fromProtectedBranch: boolean }
  /**
   * `mergeRequest`: the new head is an open merge request's (Checks::MatchingMergeRequest):
   * merging is enough. `force`: the old head is not an ancestor of the new one (a `git push
   * --force`; the API's moves never are).
   */
  | { readonly kind: 'push'; readonly branch: string; readonly mergeRequest: boolean; readonly force?: boolean }
  | { readonly kind: 'delete'; readonly branch: string; readonly isDefault: boolean };

/** The project as the check's messages name it. */
export interface CheckedRepository {
  /** `project.empty_repo?`: no branch yet. */
  readonly empty: boolean;
  readonly fullPath: string;
  /** project_project_members_url. */
  readonly membersUrl: string;
}

/** BranchCheck#empty_project_push_message. */
const emptyProjectPushMessage = (repository: CheckedRepository) =>
  `\nA default branch (e.g. master) does not yet exist for ${repository.fullPath}\nAsk a project Owner or Maintainer to create a default branch:\n\n  ${repository.membersUrl}\n\n`;

/**
 * Gitlab::Checks::BranchCheck#validate! (12.x) for one branch write: GitLab's refusal, or
 * null when the user may write it.
 */
export function branchCheck(change: BranchChange, refs: readonly ProtectedRef[], who: Pusher, repository: CheckedRepository): string | null {
  // Gitlab::Checks::PushCheck (before BranchCheck): push_code, or can_push_to_branch? — a collaborator's own branch.
  if (who.collaboration !== undefined && !mayPushTo(who, change.branch)) return PUSH_CODE_MESSAGE;
  if (change.kind === 'delete' && change.isDefault) return BRANCH_CHECK_MESSAGES.deleteDefaultBranch;
  if (!isProtected(refs, change.branch)) return null;
  // GitLab 12 has no allow_force_push: a protected branch is never force-pushed, whoever pushes.
  if (change.kind === 'push' && change.force) return BRANCH_CHECK_MESSAGES.forcePushProtectedBranch;
  const canPush = canAccessBranch('push', change.branch, refs, who);
  const canMerge = () => canAccessBranch('merge', change.branch, refs, who);
  // protected_branch_push_checks: an empty repository's first branch, and every push.
  if (repository.empty || change.kind === 'push') {
    if (change.kind === 'push' && change.mergeRequest) return canPush || canMerge() ? null : BRANCH_CHECK_MESSAGES.mergeProtectedBranch;
    if (canPush) return null;
    return repository.empty ? emptyProjectPushMessage(repository) : BRANCH_CHECK_MESSAGES.pushProtectedBranch;
  }
  if (change.kind === 'create') {
    if (canPush) return null;
    if (!canMerge()) return BRANCH_CHECK_MESSAGES.createProtectedBranch;
    return change.fromProtectedBranch ? null : BRANCH_CHECK_MESSAGES.invalidCommitCreateProtectedBranch;
  }
  // can_delete_branch?: a protected branch by :push_to_delete_protected_branch (maintainers and up).
  const mayDelete = who.isAdmin || (who.role ?? ACCESS.NONE) >= ACCESS.MAINTAINER;
  return mayDelete ? null : BRANCH_CHECK_MESSAGES.deleteProtectedBranch;
}

// ───────────────────────────── The tag check ─────────────────────────────

/** Gitlab::Checks::TagCheck::ERROR_MESSAGES (12.x). */
export const TAG_CHECK_MESSAGES = {
  changeExistingTags: 'You are not allowed to change existing tags on this project.',
  updateProtectedTag: 'Protected tags cannot be updated.',
  deleteProtectedTag: 'Protected tags cannot be deleted.',
  createProtectedTag: 'You are not allowed to create this tag as it is protected.',
} as const;

export interface TagChange {
  readonly kind: 'create' | 'update' | 'delete';
  readonly tag: string;
}

/**
 * Gitlab::Checks::TagCheck#validate! (12.x) for one tag write, against the project's
 * protected tags (each name's create rules, kind `push`): a tag that exists is changed by
 * those who may `admin_tag` (developers and up); a protected one is never moved nor deleted,
 * and created only by whom its create rules let in (UserAccess#can_create_tag?).
 */
export function tagCheck(change: TagChange, protectedTags: readonly ProtectedRef[], who: Pusher): string | null {
  if (change.kind !== 'create' && !who.canPushCode && !who.isAdmin) return TAG_CHECK_MESSAGES.changeExistingTags;
  if (!isProtected(protectedTags, change.tag)) return null;
  if (change.kind === 'update') return TAG_CHECK_MESSAGES.updateProtectedTag;
  if (change.kind === 'delete') return TAG_CHECK_MESSAGES.deleteProtectedTag;
  return canAccessBranch('push', change.tag, protectedTags, who) ? null : TAG_CHECK_MESSAGES.createProtectedTag;
}
