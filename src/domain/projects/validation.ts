import { allowedUnder } from '../access.js';
import { invalid } from '../errors.js';
import { type ProjectSettings, type ProjectNamespace } from './settings.js';

/** GitLab's Project model validations, and the path GitLab derives from a name. */

// GitLab: Gitlab::Regex.project_name_regex and its message.
const NAME_FORMAT = /^[\p{L}\p{N}\u{00A9}-\u{1f9ff}_][\p{L}\p{N}\p{Pd}\u{00A9}-\u{1f9ff}_. ]*$/u;
export const NAME_FORMAT_MESSAGE = "can contain only letters, digits, emojis, '_', '.', dash, space. It must start with letter, digit, emoji or '_'.";
// GitLab: Gitlab::PathRegex.project_path_format_regex and its message.
const PATH_FORMAT = /^[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*$/;
export const PATH_FORMAT_MESSAGE = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'";
// GitLab: Gitlab::PathRegex::PROJECT_WILDCARD_ROUTES (one-segment ones) may not be a project path.
const RESERVED_PATHS = new Set([
  '-', 'badges', 'blame', 'blob', 'builds', 'commits', 'create', 'create_dir', 'edit', 'files', 'find_file', 'new',
  'preview', 'raw', 'refs', 'tree', 'update', 'wikis',
]);

/** Ruby-hash-ordered validation errors: a key appears where its first message was added. */
class Errors {
  readonly fields: Record<string, string[]> = {};
  add(field: string, message: string) {
    (this.fields[field] ??= []).push(message);
  }
  get any() {
    return Object.keys(this.fields).length > 0;
  }
}

/**
 * GitLab's Project validations in the order Rails runs them: description, name, path,
 * name uniqueness, path uniqueness, the personal project limit, visibility against the group.
 */
export function validate(
  settings: ProjectSettings,
  namespace: ProjectNamespace,
  taken: { name: boolean; path: boolean },
  personalLimit: { limit: number; count: number } | null,
  checkVisibility = true,
): void {
  const errors = new Errors();
  if (settings.description !== null && settings.description.length > 2000) errors.add('description', 'is too long (maximum is 2000 characters)');
  if (settings.name.trim() === '') errors.add('name', "can't be blank");
  if (settings.name.length > 255) errors.add('name', 'is too long (maximum is 255 characters)');
  if (!NAME_FORMAT.test(settings.name)) errors.add('name', NAME_FORMAT_MESSAGE);
  if (settings.path.trim() === '') errors.add('path', "can't be blank");
  if (!PATH_FORMAT.test(settings.path) || /\.(git|atom)$/i.test(settings.path)) errors.add('path', PATH_FORMAT_MESSAGE);
  else if (RESERVED_PATHS.has(settings.path.toLowerCase())) errors.add('path', `${settings.path} is a reserved name`);
  if (settings.path.length > 255) errors.add('path', 'is too long (maximum is 255 characters)');
  if (taken.name) errors.add('name', 'has already been taken');
  if (taken.path) errors.add('path', 'has already been taken');
  // GitLab: Project#check_personal_projects_limit (the API answers it with 403).
  if (personalLimit && personalLimit.count >= personalLimit.limit) {
    errors.add(
      'limit_reached',
      personalLimit.limit === 0
        ? 'Personal project creation is not allowed. Please contact your administrator with questions'
        : `Your project limit is ${personalLimit.limit} projects! Please contact your administrator to increase it`,
    );
  }
  // GitLab: Project#visibility_level_allowed_by_group.
  if (checkVisibility && namespace.kind === 'group' && !allowedUnder(settings.visibility, namespace.visibility)) {
    errors.add('visibility_level', `${settings.visibility} is not allowed in a ${namespace.visibility} group.`);
  }
  if (errors.any) throw invalid(errors.fields);
}

// Rails I18n's approximations for letters that do not decompose into a base letter.
const TRANSLITERATIONS: Record<string, string> = {
  ß: 'ss', Æ: 'AE', æ: 'ae', Ø: 'O', ø: 'o', Œ: 'OE', œ: 'oe', Þ: 'TH', þ: 'th', Ð: 'D', ð: 'd', Đ: 'D', đ: 'd', Ł: 'L', ł: 'l',
  ı: 'i', Ħ: 'H', ħ: 'h', Ŋ: 'NG', ŋ: 'ng',
};

/**
 * Rails' String#parameterize, as GitLab derives a path from a name: transliterate to ASCII,
 * every run of other characters becomes one '-', no leading or trailing '-', lower case.
 */
export function parameterize(name: string): string {
  const ascii = name
    .replace(/[ßÆæØøŒœÞþÐðĐđŁłıĦħŊŋ]/g, (ch) => TRANSLITERATIONS[ch] ?? ch)
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\x00-\x7f]/g, '?');
  return ascii
    .replace(/[^a-z0-9\-_]+/gi, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-|-$/g, '')
    .toLowerCase();
}
