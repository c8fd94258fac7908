import { describe, expect, it } from 'vitest';
import { DELIM, FLUSH, MAX_PACKET, MAX_PACKET_DATA, type Packet, PktLineError, PktLineReader, pktLine, readPktLines, RESPONSE_END, sideband } from '../../src/domain/repository/pkt-line.js';

const all = (reader: PktLineReader, chunk: Uint8Array): Packet[] => [...reader.push(chunk)];
const text = (packets: Packet[]) => packets.map((p) => (p.type === 'data' ? p.data.toString('latin1') : p.type));

describe('pkt-line', () => {
  it('frames data with its length in four lowercase hex digits, the digits included', () => {
    expect(pktLine('a\n').toString()).toBe('0006a\n');
    expect(pktLine('# service=git-upload-pack\n').toString()).toBe('001e# service=git-upload-pack\n');
    expect(pktLine(Buffer.alloc(250, 0x61)).subarray(0, 4).toString()).toBe('00fe');
    expect(pktLine(Buffer.alloc(MAX_PACKET_DATA)).subarray(0, 4).toString()).toBe('fff0');
    expect(FLUSH.toString()).toBe('0000');
    expect(DELIM.toString()).toBe('0001');
    expect(RESPONSE_END.toString()).toBe('0002');
  });

  it('refuses to write an empty packet or one past 65520 bytes', () => {
    expect(() => pktLine('')).toThrow(RangeError);
    expect(() => pktLine(Buffer.alloc(MAX_PACKET_DATA + 1))).toThrow(RangeError);
  });

  it('reads back data, flush, delim and response-end packets', () => {
    const bytes = Buffer.concat([pktLine('want abc\n'), DELIM, pktLine(Buffer.from([0, 255, 10])), FLUSH, pktLine('done\n'), RESPONSE_END]);
    const packets = all(new PktLineReader(), bytes);
    expect(text(packets)).toEqual(['want abc\n', 'delim', '\u0000\u00ff\n', 'flush', 'done\n', 'response-end']);
  });

  it('reads an empty data packet (0004) and the uppercase hex git also accepts', () => {
    expect(text(all(new PktLineReader(), Buffer.from('00040009abcd\n000A12345\n')))).toEqual(['', 'abcd\n', '12345\n']);
  });

  it('gives the same packets however the stream is cut, at every byte', () => {
    const bytes = Buffer.concat([pktLine('first line\n'), FLUSH, pktLine(Buffer.alloc(300, 7)), DELIM, pktLine('x'), RESPONSE_END]);
    const whole = text(all(new PktLineReader(), bytes));
    for (let cut = 0; cut <= bytes.length; cut++) {
      const reader = new PktLineReader();
      expect([...text(all(reader, bytes.subarray(0, cut))), ...text(all(reader, bytes.subarray(cut)))]).toEqual(whole);
      reader.end();
    }
    const reader = new PktLineReader();
    const oneByOne = [...bytes].flatMap((byte) => text(all(reader, Buffer.from([byte]))));
    expect(oneByOne).toEqual(whole);
  });

  it('hands over the bytes after the packets a consumer took (a push’s pack after its commands)', () => {
    const reader = new PktLineReader();
    const commands: Packet[] = [];
    for (const packet of reader.push(Buffer.concat([pktLine('old new refs/heads/main\0report-status\n'), FLUSH, Buffer.from('PACK…')]))) {
      commands.push(packet);
      if (packet.type === 'flush') break;
    }
    expect(text(commands)).toEqual(['old new refs/heads/main\0report-status\n', 'flush']);
    expect(reader.rest().toString()).toBe('PACK…');
    expect(reader.rest().length).toBe(0);
  });

  it.each([
    ['a non-hex length', '00g1abcd', 'protocol error: bad line length character: 00g1'],
    ['a length with a sign', '-001', 'protocol error: bad line length character: -001'],
    ['0003', '0003', 'protocol error: bad line length 3'],
    ['a length past 65520', 'fff1', 'protocol error: bad line length 65521'],
    ['ffff', 'ffff', 'protocol error: bad line length 65535'],
  ])('refuses %s', (_name, bytes, message) => {
    const reader = new PktLineReader();
    expect(() => all(reader, Buffer.from(bytes))).toThrow(new PktLineError(message));
  });

  it('accepts a packet of exactly 65520 bytes', () => {
    const packet = pktLine(Buffer.alloc(MAX_PACKET_DATA, 1));
    expect(packet.length).toBe(MAX_PACKET);
    const [read] = all(new PktLineReader(), packet);
    expect(read).toEqual({ type: 'data', data: Buffer.alloc(MAX_PACKET_DATA, 1) });
  });

  it('refuses a stream that ends inside a packet', async () => {
    const reader = new PktLineReader();
    all(reader, Buffer.from('0009abc'));
    expect(() => reader.end()).toThrow(new PktLineError('the remote end hung up unexpectedly'));
    const chunks = [Buffer.from('0006a\n00'), Buffer.from('0')];
    const seen: Packet[] = [];
    await expect(
      (async () => {
        for await (const packet of readPktLines(chunks)) seen.push(packet);
      })(),
    ).rejects.toThrow(PktLineError);
    expect(text(seen)).toEqual(['a\n']);
  });

  it('reads every packet of an async stream', async () => {
    async function* body() {
      yield Buffer.from('0006a');
      yield Buffer.from('\n00');
      yield Buffer.from('000006b\n0000');
    }
    const seen: Packet[] = [];
    for await (const packet of readPktLines(body())) seen.push(packet);
    expect(text(seen)).toEqual(['a\n', 'flush', 'b\n', 'flush']);
  });
});

describe('side-band-64k', () => {
  it('prefixes each packet with its channel', () => {
    expect(sideband(2, 'Counting objects\r').toString('latin1')).toBe('0016\u0002Counting objects\r');
    expect(sideband(3, 'error').toString('latin1')).toBe('000a\u0003error');
    expect(sideband(1, Buffer.alloc(0)).length).toBe(0);
  });

  it('cuts data into packets of at most 65520 bytes, channel byte and length included', () => {
    const data = Buffer.alloc(65515 * 2 + 10);
    for (let i = 0; i < data.length; i++) data[i] = i % 251;
    const framed = sideband(1, data);
    const packets = all(new PktLineReader(), framed);
    expect(packets.map((p) => (p.type === 'data' ? p.data.length : 0))).toEqual([65516, 65516, 11]);
    expect(framed.subarray(0, 4).toString()).toBe('fff0');
    const payload = Buffer.concat(
      packets.map((p) => {
        if (p.type !== 'data') throw new Error('not data');
        expect(p.data[0]).toBe(1);
        return p.data.subarray(1);
      }),
    );
    expect(payload.equals(data)).toBe(true);
  });

  it('cuts at 1000 bytes for plain side-band', () => {
    const packets = all(new PktLineReader(), sideband(2, Buffer.alloc(2000, 0x2e), 1000));
    expect(packets.map((p) => (p.type === 'data' ? p.data.length : 0))).toEqual([996, 996, 11]);
  });
});
