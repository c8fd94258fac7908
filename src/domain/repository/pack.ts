import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import type { GitObject, ObjectType } from './objects.js';

/**
 * Writing git's pack format, version 2 (gitformat-pack): what `git-upload-pack` sends a
 * clone or a fetch. `PACK`, the version and the object count (4-byte big-endian each), then
 * every object as an entry — a type-and-size header (git's varint: the type in bits 4–6 of
 * the first byte, the size's low 4 bits below it, 7 more bits per following byte) and the
 * zlib stream of its content — then the SHA-1 of all of that.
 *
 * No delta compression: every entry is whole (undeltified), so a pack is about the size of
 * the objects' deflated contents. The pack is streamed as it is written; beyond the objects
 * the iterable holds, it keeps one object's compressed bytes at a time. The count comes
 * first in the format, so the caller must know it before the first object; an iterable that
 * yields another number of objects makes the generator throw (after it has yielded the
 * objects up to that point, so the stream must then be abandoned).
 */

/** The pack entry type numbers (OBJ_COMMIT … OBJ_TAG); 6 and 7 are the deltas (./pack-read.ts). */
export const PACK_TYPES: Readonly<Record<ObjectType, number>> = { commit: 1, tree: 2, blob: 3, tag: 4 };

/** An entry's header: type and size, git's varint. */
export function entryHeader(type: number, size: number): Buffer {
  const bytes: number[] = [];
  let byte = (type << 4) | (size & 0x0f);
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest & 0x7f;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

/** The 12 bytes a version-2 pack of `count` objects starts with. */
export function packHeader(count: number): Buffer {
  if (!Number.isInteger(count) || count < 0 || count > 0xffffffff) throw new RangeError(`pack: bad object count ${count}`);
  const header = Buffer.alloc(12);
  header.write('PACK', 0, 'latin1');
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(count, 8);
  return header;
}

export async function* packObjects(count: number, objects: AsyncIterable<GitObject> | Iterable<GitObject>): AsyncGenerator<Buffer> {
  const hash = createHash('sha1');
  const header = packHeader(count);
  hash.update(header);
  yield header;
  let written = 0;
  for await (const object of objects) {
    if (++written > count) throw new RangeError(`pack: more objects than the ${count} announced`);
    const entry = Buffer.concat([entryHeader(PACK_TYPES[object.type], object.content.length), deflateSync(object.content)]);
    hash.update(entry);
    yield entry;
  }
  if (written !== count) throw new RangeError(`pack: ${written} objects where ${count} were announced`);
  yield hash.digest();
}
