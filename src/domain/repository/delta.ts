/**
 * Git's delta format (gitformat-pack, "Deltified representation"; patch-delta.c), what an
 * OFS_DELTA or REF_DELTA entry of a pack holds: the base's size and the result's size (7-bit
 * little-endian varints), then instructions — copy (bit 7 set: bits 0–3 say which offset
 * bytes follow, bits 4–6 which size bytes; a size of 0 means 0x10000) and insert (1–127: that
 * many literal bytes follow); 0 is reserved. Every instruction is checked against the base's
 * and the result's bounds: a hostile delta is refused, never trusted.
 */

/** A delta's size varint at `at`: the value and where it ends, or undefined past the end or 2^46. */
function deltaSize(delta: Uint8Array, at: number): [number, number] | undefined {
  let size = 0;
  let shift = 0;
  for (;;) {
    if (at >= delta.length || shift > 42) return undefined;
    const c = delta[at++]!;
    size += (c & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(c & 0x80)) return [size, at];
  }
}

/** The result size a delta declares; undefined for a bad header (patchDelta says why). */
export function deltaResultSize(delta: Uint8Array): number | undefined {
  const source = deltaSize(delta, 0);
  return source && deltaSize(delta, source[1])?.[0];
}

/**
 * `base` with `delta` applied (git's patch-delta.c), or why not. The target is allocated
 * only after its declared size is checked against `maxBytes`.
 */
export function patchDelta(base: Uint8Array, delta: Uint8Array, maxBytes: number): Buffer | string {
  const source = deltaSize(delta, 0);
  if (!source) return 'bad delta header';
  if (source[0] !== base.length) return `delta source size ${source[0]} is not the base's ${base.length}`;
  const target = deltaSize(delta, source[1]);
  if (!target) return 'bad delta header';
  const [size] = target;
  if (size > maxBytes) return `delta result size ${size} exceeds the limit of ${maxBytes} bytes`;
  const out = Buffer.allocUnsafe(size);
  let at = target[1];
  let written = 0;
  while (at < delta.length) {
    const op = delta[at++]!;
    if (op & 0x80) {
      let copyOffset = 0;
      let copySize = 0;
      for (let bit = 0; bit < 4; bit++) {
        if (op & (1 << bit)) {
          if (at >= delta.length) return 'truncated delta';
          copyOffset += delta[at++]! * 2 ** (8 * bit);
        }
      }
      for (let bit = 0; bit < 3; bit++) {
        if (op & (0x10 << bit)) {
          if (at >= delta.length) return 'truncated delta';
          copySize += delta[at++]! << (8 * bit);
        }
      }
      if (copySize === 0) copySize = 0x10000;
      if (copyOffset + copySize > base.length) return 'delta copies out of the base’s bounds';
      if (written + copySize > size) return 'delta result exceeds its declared size';
      out.set(base.subarray(copyOffset, copyOffset + copySize), written);
      written += copySize;
    } else if (op !== 0) {
      if (at + op > delta.length) return 'truncated delta';
      if (written + op > size) return 'delta result exceeds its declared size';
      out.set(delta.subarray(at, at + op), written);
      at += op;
      written += op;
    } else {
      return 'delta opcode 0 is reserved';
    }
  }
  if (written !== size) return `delta result size ${written} is not the declared ${size}`;
  return out;
}
