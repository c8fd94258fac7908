/**
 * Git's pkt-line framing (gitprotocol-common, "pkt-line Format"), which the smart HTTP
 * protocol's requests and answers are made of: four hex digits giving the packet's length
 * including themselves, then the data. `0000` is a flush packet, `0001` a delimiter and
 * `0002` a response end (both protocol v2); `0003` is invalid. A packet is at most 65520
 * bytes (LARGE_PACKET_MAX), so at most 65516 bytes of data.
 *
 * Also side-band-64k (gitprotocol-pack, "multiplexing"): each packet's data starts with its
 * channel, 1 for pack data, 2 for progress, 3 for a fatal error.
 *
 * Pure: no I/O. The reader is incremental (push chunks as they arrive, take packets out) and
 * holds at most one unfinished packet (≤ 65520 bytes) besides the chunk being read.
 */

/** LARGE_PACKET_MAX: the longest packet, its four length digits included. */
export const MAX_PACKET = 65520;
/** The most data one packet carries. */
export const MAX_PACKET_DATA = MAX_PACKET - 4;

/** Ends a message (and a ref advertisement, a want list, a command list). Shared: do not write into it. */
export const FLUSH: Buffer = Buffer.from('0000');
/** Separates a protocol v2 command's sections. */
export const DELIM: Buffer = Buffer.from('0001');
/** Ends a protocol v2 response (stateless-rpc). */
export const RESPONSE_END: Buffer = Buffer.from('0002');

export type Packet =
  | { readonly type: 'data'; readonly data: Buffer }
  | { readonly type: 'flush' }
  | { readonly type: 'delim' }
  | { readonly type: 'response-end' };

/** Bad framing from the other side; the message is git's (pkt-line.c). */
export class PktLineError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PktLineError';
  }
}

const hex4 = (n: number) => n.toString(16).padStart(4, '0');

/**
 * One data packet. Empty data is refused (gitprotocol-common: implementations SHOULD NOT send
 * `0004`), as is data longer than 65516 bytes: both are the caller's mistakes.
 */
export function pktLine(data: string | Uint8Array): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  if (bytes.length === 0) throw new RangeError('pkt-line: empty data packet');
  if (bytes.length > MAX_PACKET_DATA) throw new RangeError(`pkt-line: ${bytes.length} bytes do not fit in one packet`);
  return Buffer.concat([Buffer.from(hex4(bytes.length + 4)), bytes]);
}

export type SidebandChannel = 1 | 2 | 3;

/**
 * `data` on side-band channel `channel`, cut into packets of at most `max` bytes (length
 * digits and channel byte included; 65520 for side-band-64k, 1000 for plain side-band).
 * Empty data gives no packet.
 */
export function sideband(channel: SidebandChannel, data: string | Uint8Array, max: number = MAX_PACKET): Buffer {
  const bytes = typeof data === 'string' ? Buffer.from(data) : data;
  if (!Number.isInteger(max) || max < 6 || max > MAX_PACKET) throw new RangeError(`side-band: bad packet size ${max}`);
  const room = max - 5;
  const packets = Math.ceil(bytes.length / room);
  const out = Buffer.allocUnsafe(bytes.length + packets * 5);
  let at = 0;
  for (let from = 0; from < bytes.length; from += room) {
    const piece = bytes.subarray(from, from + room);
    at += out.write(hex4(piece.length + 5), at, 'latin1');
    out[at++] = channel;
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

// ───────────────────────────── Reading ─────────────────────────────

function lengthOf(header: Buffer): number {
  let n = 0;
  for (let i = 0; i < 4; i++) {
    const c = header[i]!;
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    // git: "protocol error: bad line length character: %.4s"
    if (digit < 0) throw new PktLineError(`protocol error: bad line length character: ${header.toString('latin1', 0, 4)}`);
    n = n * 16 + digit;
  }
  if (n === 3 || n > MAX_PACKET) throw new PktLineError(`protocol error: bad line length ${n}`);
  return n;
}

/**
 * The incremental reader: `push(chunk)` yields every packet the bytes so far complete;
 * `rest()` hands over what follows the last packet taken (a receive-pack request's pack,
 * after the commands' flush); `end()` refuses a stream cut inside a packet.
 */
export class PktLineReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes needed before the next packet can be cut: its header, then the whole packet. */
  private need = 4;

  /**
   * The packets `chunk` completes, one at a time: a consumer may stop after any of them (at
   * a flush) and take the rest of the stream with `rest()`.
   */
  *push(chunk: Uint8Array): Generator<Packet> {
    if (chunk.length === 0) return;
    this.chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length));
    this.buffered += chunk.length;
    while (this.buffered >= this.need) {
      // Joined only once a packet is complete, so each byte is copied at most twice however
      // finely the stream is cut.
      const buf = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
      this.chunks = [buf];
      const n = lengthOf(buf);
      if (n < 4) {
        this.consume(buf, 4);
        yield n === 0 ? { type: 'flush' } : n === 1 ? { type: 'delim' } : { type: 'response-end' };
      } else if (buf.length < n) {
        this.need = n;
      } else {
        this.consume(buf, n);
        yield { type: 'data', data: buf.subarray(4, n) };
      }
    }
  }

  private consume(buf: Buffer, n: number): void {
    this.chunks = n < buf.length ? [buf.subarray(n)] : [];
    this.buffered = buf.length - n;
    this.need = 4;
  }

  /** The bytes read but not yet cut into packets; the reader is empty afterwards. */
  rest(): Buffer {
    const out = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    this.chunks = [];
    this.buffered = 0;
    this.need = 4;
    return out;
  }

  /** The stream has ended: it must have ended between packets. */
  end(): void {
    // git: "the remote end hung up unexpectedly"
    if (this.buffered > 0) throw new PktLineError('the remote end hung up unexpectedly');
  }
}

/** Every packet of a stream of chunks (a request body), refusing one cut inside a packet. */
export async function* readPktLines(source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<Packet> {
  const reader = new PktLineReader();
  for await (const chunk of source) yield* reader.push(chunk);
  reader.end();
}
