import { z } from 'zod';
import { invalid } from './errors.js';

/**
 * Uploaded files (avatars of users, groups and projects). Their bytes live outside the event
 * log, in the content-addressed `uploads` table written in the transaction of the event that
 * references them; an event records only what the bytes are: their SHA-256, size and the
 * file's name. Replay and `events verify` therefore never need the bytes.
 */

/** What an event records of an uploaded file. */
export const uploadRef = z.strictObject({
  /** SHA-256 of the bytes, lower-case hex: the key of the `uploads` row. */
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size: z.int().nonnegative(),
  /** The name it is served under (sanitized as CarrierWave does). */
  filename: z.string(),
});

export type UploadRef = z.output<typeof uploadRef>;

/** The same file under the same name (uploading it again changes nothing). */
export const sameUpload = (a: UploadRef | null, b: UploadRef) => a !== null && a.sha256 === b.sha256 && a.filename === b.filename;

/** The models GitLab's AvatarUploader mounts `avatar` on, as they appear in its paths. */
export type AvatarModel = 'user' | 'group' | 'project';

// ───────────────────────────── GitLab's rules ─────────────────────────────

/** GitLab 12: Gitlab::FileTypeDetection::SAFE_IMAGE_EXT, the extensions Avatarable#avatar_type accepts. */
export const AVATAR_EXTENSIONS = ['png', 'jpg', 'jpeg', 'gif', 'bmp', 'tiff', 'ico'] as const;
/** GitLab 12: Avatarable `validates :avatar, file_size: { maximum: 200.kilobytes.to_i }`. */
export const AVATAR_MAXIMUM_BYTES = 200 * 1024;

const FORMAT_MESSAGE = `file format is not supported. Please try one of the following supported formats: ${AVATAR_EXTENSIONS.join(', ')}`;
// GitLab: FileSizeValidator's :size_too_big with number_to_human_size(200.kilobytes).
const SIZE_MESSAGE = 'is too big (should be at most 200 KB)';

const CONTENT_TYPES: Record<(typeof AVATAR_EXTENSIONS)[number], string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  bmp: 'image/bmp',
  tiff: 'image/tiff',
  ico: 'image/vnd.microsoft.icon',
};

const extensionOf = (filename: string) => {
  const dot = filename.lastIndexOf('.');
  return dot <= 0 ? '' : filename.slice(dot + 1).toLowerCase();
};

/** The Content-Type an avatar is served with, from its extension (as GitLab serves uploads); undefined for none of the image types. */
export function avatarContentType(filename: string): string | undefined {
  return CONTENT_TYPES[extensionOf(filename) as keyof typeof CONTENT_TYPES];
}

/** The signatures the image types start with. */
const MAGIC: readonly (readonly number[])[] = [
  [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], // PNG
  [0xff, 0xd8, 0xff], // JPEG
  [0x47, 0x49, 0x46, 0x38], // GIF8(7|9)a
  [0x42, 0x4d], // BMP
  [0x49, 0x49, 0x2a, 0x00], // TIFF, little-endian
  [0x4d, 0x4d, 0x00, 0x2a], // TIFF, big-endian
  [0x00, 0x00, 0x01, 0x00], // ICO
];

const isImage = (bytes: Uint8Array) => MAGIC.some((magic) => magic.length <= bytes.length && magic.every((byte, i) => bytes[i] === byte));

/**
 * CarrierWave::SanitizedFile#sanitize: the base name, every character but word characters,
 * `.`, `-` and `+` replaced by `_`; a name of dots only gets a leading `_`; none is `unnamed`.
 */
export function sanitizeFilename(name: string): string {
  let base = name.replace(/\\/g, '/');
  base = base.slice(base.lastIndexOf('/') + 1);
  base = base.replace(/[^\p{L}\p{M}\p{N}\p{Pc}.\-+]/gu, '_');
  if (/^\.+$/.test(base)) base = `_${base}`;
  return base === '' ? 'unnamed' : base;
}

/**
 * Avatarable's validations of a new avatar, in GitLab's order: avatar_type (the extension),
 * then the file size. forgelog also reads the first bytes: a file that is none of the image
 * types is refused as a wrong format whatever its name says (GitLab 12 trusted the name).
 */
export function checkAvatar(filename: string, bytes: Uint8Array): void {
  const errors: string[] = [];
  if (!avatarContentType(filename) || !isImage(bytes)) errors.push(FORMAT_MESSAGE);
  if (bytes.length > AVATAR_MAXIMUM_BYTES) errors.push(SIZE_MESSAGE);
  if (errors.length > 0) throw invalid({ avatar: errors });
}

/**
 * Where GitLab serves an avatar (AvatarUploader: `uploads/-/system/<model>/avatar/<id>/<filename>`,
 * its `local_url`); the API shows it after the instance's URL.
 */
export const avatarPath = (model: AvatarModel, id: number, filename: string) => `/uploads/-/system/${model}/avatar/${id}/${encodeURI(filename)}`;

/** GitLab: Avatarable#avatar_url(only_path: false), the instance's URL and the stored path; null without an avatar. */
export const avatarUrlOf = (externalUrl: string, path: string | null) => (path === null ? null : `${externalUrl}${path}`);
