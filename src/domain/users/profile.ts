import { invalid } from '../errors.js';
import { STRING_MAXIMUM, tooLong, type ProfileChanges, type UserProfile } from '../users.js';

// GitLab: Gitlab::PathRegex.namespace_format_regex and its message.
const USERNAME_FORMAT = /^[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*[a-zA-Z0-9_\-]$|^[a-zA-Z0-9_]$/;
const USERNAME_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'.";
const EMAIL_FORMAT = /^[^@\s]+@[^@\s]+$/;

/** GitLab (Devise case_insensitive_keys / strip_whitespace_keys): emails are stripped and downcased. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export function validateProfile(profile: ProfileChanges, password?: string | undefined): void {
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  if (profile.username !== undefined) {
    if (profile.username.length === 0) add('username', "can't be blank");
    else if (profile.username.length > STRING_MAXIMUM) add('username', tooLong(STRING_MAXIMUM));
    else if (!USERNAME_FORMAT.test(profile.username) || /\.(git|atom)$/i.test(profile.username)) add('username', USERNAME_MESSAGE);
  }
  if (profile.name !== undefined) {
    if (profile.name.trim().length === 0) add('name', "can't be blank");
    else if (profile.name.length > 128) add('name', tooLong(128));
  }
  if (profile.email !== undefined) {
    if (profile.email.length === 0) add('email', "can't be blank");
    else if (profile.email.length > STRING_MAXIMUM) add('email', tooLong(STRING_MAXIMUM));
    else if (!EMAIL_FORMAT.test(profile.email)) add('email', 'is invalid');
  }
  if (profile.projects_limit !== undefined && profile.projects_limit < 0) add('projects_limit', 'must be greater than or equal to 0');
  if (profile.bio !== undefined && profile.bio.length > STRING_MAXIMUM) add('bio', tooLong(STRING_MAXIMUM));
  if (password !== undefined) {
    // Devise validatable: presence, then length 8..128 (allow_blank).
    const length = [...password].length;
    if (password === '') add('password', "can't be blank");
    else if (length < 8) add('password', 'is too short (minimum is 8 characters)');
    else if (length > 128) add('password', tooLong(128));
  }
  if (Object.keys(errors).length > 0) throw invalid(errors);
}

// GitLab: owns_public_email — the public email must be one of the user's emails (here: the primary one).
export function checkPublicEmail(publicEmail: string, email: string) {
  if (publicEmail !== '' && publicEmail.toLowerCase() !== email.toLowerCase()) throw invalid({ public_email: ['is not an email you own'] });
}

/** The requested fields whose values differ from the profile's (an edit that changes nothing records nothing). */
export function changedFields(profile: UserProfile, changes: ProfileChanges): ProfileChanges {
  const changed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    const current = profile[key as keyof UserProfile];
    if (JSON.stringify(current) !== JSON.stringify(value)) changed[key] = value;
  }
  return changed as ProfileChanges;
}
