import type { Db } from '../../database/database.js';

/** The bytes of an upload, by the SHA-256 its event recorded. */
export async function findUpload(db: Db, sha256: string): Promise<Uint8Array | undefined> {
  const row = await db.selectFrom('uploads').select('content').where('sha256', '=', sha256).executeTakeFirst();
  return row?.content;
}
