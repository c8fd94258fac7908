/**
 * Uploaded files (avatars), content-addressed by SHA-256, append-only: written by the
 * commands in the transaction of the event that references them (src/commands/uploads.ts),
 * never by a projection, so a rebuild leaves them alone. Events carry the hash, size and
 * filename; the bytes are only here.
 */
export interface UploadsTable {
  sha256: string;
  size: number;
  content: Uint8Array;
}

export interface UploadsReadTables {
  uploads: UploadsTable;
}

declare module '../../database/database.js' {
  interface Database extends UploadsReadTables {}
}
