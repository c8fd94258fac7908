/** What UserPolicy reads of the user asked about. */
export interface PolicyUser {
  readonly id: number;
  readonly private_profile: boolean;
  readonly state: 'active' | 'blocked';
}

/**
 * GitLab's UserPolicy :read_user_profile — denied for a private or blocked profile unless
 * the viewer is that user or an administrator (Entities::User#created_at and EventsFinder's
 * cannot_access_private_profile? ask it).
 */
export function canReadUserProfile(user: PolicyUser, viewer: { readonly id: number; readonly isAdmin: boolean } | null): boolean {
  if (!user.private_profile && user.state !== 'blocked') return true;
  return Boolean(viewer && (viewer.isAdmin || viewer.id === user.id));
}
