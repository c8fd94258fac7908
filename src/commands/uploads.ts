import { createHash } from 'node:crypto';
import type { Db } from '../database/database.js';
import { checkAvatar, sanitizeFilename, type UploadRef } from '../domain/uploads.js';
import type { CommandInput } from './kernel/run.js';

/** An uploaded file checked and hashed, waiting to be stored with the event that references it. */
export interface PendingUpload {
  readonly ref: UploadRef;
  readonly bytes: Uint8Array;
}

/**
 * An `avatar` parameter as Avatarable takes it: undefined when none was sent or the file is
 * empty (CarrierWave caches nothing then, and the avatar stays as it was); otherwise checked
 * (400 `{"message":{"avatar":[…]}}`) and hashed. Reads the whole file: call it once the
 * caller is authorized.
 */
export async function avatarUpload(file: File | undefined): Promise<PendingUpload | undefined> {
  if (!file || file.size === 0) return undefined;
  const bytes = new Uint8Array(await file.arrayBuffer());
  const filename = sanitizeFilename(file.name);
  checkAvatar(filename, bytes);
  return { ref: { sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length, filename }, bytes };
}

/**
 * Stores an upload's bytes in the command's own transaction (before it decides), so the
 * event that references them and the bytes commit together or not at all, as the
 * repository's objects do. Content-addressed: bytes already stored write nothing.
 */
export async function storeUpload(trx: Db, upload: PendingUpload): Promise<void> {
  await trx
    .insertInto('uploads')
    .values({ sha256: upload.ref.sha256, size: upload.ref.size, content: upload.bytes })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .execute();
}

/** The command, building in its transaction after storing `upload` (when there is one). */
export function withUpload<C>(upload: PendingUpload | undefined, command: CommandInput<C>): CommandInput<C> {
  if (!upload) return command;
  return async (trx: Db) => {
    await storeUpload(trx, upload);
    return typeof command === 'function' ? (command as (trx: Db) => Promise<C>)(trx) : command;
  };
}
