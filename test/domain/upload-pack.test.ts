import { describe, expect, it } from 'vitest';
import { DELIM, FLUSH, type Packet, PktLineReader, pktLine } from '../../src/domain/repository/pkt-line.js';
import { acknowledgments, advertiseV0, INFINITE_DEPTH, lsRefs, negotiateV0, NO_SHALLOW, parseV0, parseV2, type Refs, resolveDeepenNot, shallowInfo, shallowUpdateV0 } from '../../src/domain/repository/upload-pack.js';

/** upload-pack's protocol bytes, without a repository (the HTTP side: test/http/git-smart-http.test.ts). */

const packets = (...parts: (string | Buffer)[]): Packet[] => [...new PktLineReader().push(Buffer.concat(parts.map((p) => (typeof p === 'string' ? pktLine(p) : p))))];
const lines = (bytes: Buffer) => [...new PktLineReader().push(bytes)].map((p) => (p.type === 'data' ? p.data.toString() : p.type));
const [a, b, c, x] = ['a', 'b', 'c', 'e'].map((ch) => ch.repeat(40)) as [string, string, string, string];

describe('v0 negotiation (get_common_commits)', () => {
  const request = (capabilities: string, ...rest: (string | Buffer)[]) => parseV0(packets(`want ${a} ${capabilities}\n`, FLUSH, ...rest));
  const common = new Set([b, c]);

  it('multi_ack_detailed: each common have `common`, NAK at the flush, the last one after done', () => {
    expect(lines(negotiateV0(request('multi_ack_detailed', `have ${x}\n`, `have ${b}\n`, `have ${c}\n`, FLUSH), common))).toEqual([`ACK ${b} common\n`, `ACK ${c} common\n`, 'NAK\n']);
    expect(lines(negotiateV0(request('multi_ack_detailed', `have ${b}\n`, `have ${c}\n`, 'done\n'), common))).toEqual([`ACK ${b} common\n`, `ACK ${c} common\n`, `ACK ${c}\n`]);
  });

  it('multi_ack: `continue`; neither: only the first common have, NAK only without one', () => {
    expect(lines(negotiateV0(request('multi_ack', `have ${b}\n`, `have ${c}\n`, 'done\n'), common))).toEqual([`ACK ${b} continue\n`, `ACK ${c} continue\n`, `ACK ${c}\n`]);
    expect(lines(negotiateV0(request('side-band-64k', `have ${b}\n`, `have ${c}\n`, 'done\n'), common))).toEqual([`ACK ${b}\n`]);
    expect(lines(negotiateV0(request('side-band-64k', `have ${b}\n`, FLUSH), common))).toEqual([`ACK ${b}\n`]);
    expect(lines(negotiateV0(request('side-band-64k', `have ${x}\n`, 'done\n'), common))).toEqual(['NAK\n']);
  });

  it('reads the capabilities of the first want only, and refuses what is not a want or a have', () => {
    const parsed = parseV0(packets(`want ${a} side-band no-progress include-tag\n`, `want ${b} side-band-64k\n`, FLUSH, 'done\n'));
    expect(parsed).toMatchObject({ wants: [a, b], sideband: 1000, progress: false, includeTag: true, multiAck: 'none', done: true });
    expect(() => parseV0(packets(`want ${a}\n`, 'filter blob:none\n', FLUSH))).toThrow("upload-pack: protocol error, expected to get 'want', not 'filter blob:none'");
    expect(() => parseV0(packets(`want ${a}\n`, FLUSH, 'have nope\n'))).toThrow("upload-pack: protocol error, expected to get object ID, not 'have nope'");
    expect(() => parseV0(packets(`want ${a}\n`, FLUSH, 'shallow x\n'))).toThrow("upload-pack: expected SHA1 list, got 'shallow x'");
  });
});

describe('v2', () => {
  const refs: Refs = { head: { target: 'refs/heads/main', sha: null }, refs: [{ name: 'refs/tags/v1', sha: b, peeled: c }] };

  it('parses a command, its capabilities and arguments; refuses unknown ones as git', () => {
    expect(parseV2(packets('command=fetch\n', 'agent=git/2.39\n', 'server-option=x\n', DELIM, `want ${a}\n`, `have ${b}\n`, 'thin-pack\n', 'ofs-delta\n', 'no-progress\n', FLUSH))).toEqual({
      command: 'fetch', wants: [a], haves: [b], done: false, includeTag: false, sideband: 65520, progress: false, shallow: NO_SHALLOW,
    });
    expect(parseV2(packets('command=ls-refs\n', FLUSH))).toEqual({ command: 'ls-refs', peel: false, symrefs: false, unborn: false, prefixes: [] });
    expect(() => parseV2(packets('agent=x\n', FLUSH))).toThrow('no command requested');
    expect(() => parseV2(packets('command=fetch\n', 'object-format=sha256\n', FLUSH))).toThrow('mismatched object format: server sha1; client sha256');
    expect(() => parseV2(packets('command=fetch\n', DELIM, 'filter blob:none\n', FLUSH))).toThrow("upload-pack: unexpected line: 'filter blob:none'");
    expect(() => parseV2(packets('command=fetch\n', DELIM, `want ${a}\n`))).toThrow('expected flush after arguments');
  });

  it('ls-refs: an unborn HEAD when asked, prefixes, peeled tags; acknowledgments', () => {
    expect(lines(lsRefs(refs, { command: 'ls-refs', peel: true, symrefs: true, unborn: true, prefixes: [] }))).toEqual(['unborn HEAD symref-target:refs/heads/main\n', `${b} refs/tags/v1 peeled:${c}\n`, 'flush']);
    expect(lines(lsRefs(refs, { command: 'ls-refs', peel: false, symrefs: false, unborn: false, prefixes: ['refs/heads/'] }))).toEqual(['flush']);
    expect(lines(acknowledgments([x, b, b], new Set([b])))).toEqual(['acknowledgments\n', `ACK ${b}\n`, 'flush']);
    expect(lines(acknowledgments([x], new Set([b])))).toEqual(['acknowledgments\n', 'NAK\n', 'flush']);
  });

  it('v0 advertises the capabilities on the first ref when HEAD is unborn', () => {
    expect(lines(advertiseV0(refs, 'forgelog/test'))).toEqual([
      `${b} refs/tags/v1\0multi_ack thin-pack side-band side-band-64k ofs-delta shallow deepen-since deepen-not deepen-relative no-progress include-tag multi_ack_detailed allow-tip-sha1-in-want allow-reachable-sha1-in-want object-format=sha1 agent=forgelog/test\n`,
      `${c} refs/tags/v1^{}\n`,
      'flush',
    ]);
  });
});

describe('shallow requests (process_shallow, process_deepen*, send_shallow_info)', () => {
  it('reads v0 shallow and deepen lines beside the wants, deepen-relative as a capability', () => {
    const request = parseV0(packets(`want ${a} side-band-64k deepen-relative\n`, `shallow ${b}\n`, 'deepen 2\n', FLUSH));
    expect(request).toMatchObject({ wants: [a], negotiates: false, shallow: { shallows: [b], depth: 2, deepenSince: null, deepenNot: [], deepenRelative: true } });
    expect(parseV0(packets(`want ${a}\n`, 'deepen-since 1500000000\n', 'deepen-not main\n', FLUSH, 'done\n'))).toMatchObject({
      negotiates: true,
      done: true,
      shallow: { depth: 0, deepenSince: 1500000000, deepenNot: ['main'], deepenRelative: false },
    });
  });

  it('reads v2 fetch arguments', () => {
    expect(parseV2(packets('command=fetch\n', DELIM, `want ${a}\n`, `shallow ${c}\n`, `deepen ${INFINITE_DEPTH}\n`, 'deepen-relative\n', 'done\n', FLUSH))).toMatchObject({
      shallow: { shallows: [c], depth: INFINITE_DEPTH, deepenRelative: true },
    });
  });

  it("refuses what git's upload-pack refuses", () => {
    expect(() => parseV0(packets(`want ${a}\n`, 'deepen 0\n', FLUSH))).toThrow('Invalid deepen: deepen 0');
    expect(() => parseV0(packets(`want ${a}\n`, 'deepen x\n', FLUSH))).toThrow('Invalid deepen: deepen x');
    expect(() => parseV0(packets(`want ${a}\n`, 'deepen-since soon\n', FLUSH))).toThrow('Invalid deepen-since: deepen-since soon');
    expect(() => parseV0(packets(`want ${a}\n`, 'shallow zz\n', FLUSH))).toThrow('invalid shallow line: shallow zz');
    expect(() => parseV2(packets('command=fetch\n', DELIM, `want ${a}\n`, 'deepen 1\n', 'deepen-not main\n', FLUSH))).toThrow(
      'git upload-pack: deepen and deepen-since (or deepen-not) cannot be used together',
    );
  });

  it('answers the shallow update: v0 lines and a flush, v2 a shallow-info section and a delimiter', () => {
    expect(lines(shallowUpdateV0({ shallow: [a], unshallow: [b] }))).toEqual([`shallow ${a}\n`, `unshallow ${b}\n`, 'flush']);
    expect(lines(shallowInfo({ shallow: [], unshallow: [] }))).toEqual(['shallow-info\n', 'delim']);
  });

  it("resolves deepen-not as git's expand_ref: one ref, peeled, or ambiguous", () => {
    const refs: Refs = { refs: [{ name: 'refs/heads/main', sha: a }, { name: 'refs/heads/v1', sha: b }, { name: 'refs/tags/v1', sha: c, peeled: x }], head: { target: 'refs/heads/main', sha: a } };
    expect(resolveDeepenNot(refs, 'main')).toBe(a);
    expect(resolveDeepenNot(refs, 'refs/tags/v1')).toBe(x);
    expect(resolveDeepenNot(refs, 'HEAD')).toBe(a);
    expect(() => resolveDeepenNot(refs, 'v1')).toThrow('git upload-pack: ambiguous deepen-not: deepen-not v1');
    expect(() => resolveDeepenNot(refs, 'nope')).toThrow('git upload-pack: ambiguous deepen-not: deepen-not nope');
  });
});
