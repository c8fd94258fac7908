import { generateKeyPairSync, randomBytes, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { parseTreeHeadJson, publicKeyPem, signTreeHead, treeHeadJson, treeHeadSignatureInput, verifyTreeHead } from '../../src/eventstore/tree-heads.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

describe('signed tree heads (RFC 6962 §3.5)', () => {
  const root = randomBytes(32);
  const head = signTreeHead(privateKey, 1_000_000, 1_764_460_800_123, root);

  it('signs the TreeHeadSignature structure: v1, tree_hash, timestamp, tree size, root', () => {
    const input = treeHeadSignatureInput(1_000_000, 1_764_460_800_123, root);
    expect(input.toString('hex')).toBe(`0001${(1_764_460_800_123).toString(16).padStart(16, '0')}${(1_000_000).toString(16).padStart(16, '0')}${root.toString('hex')}`);
    // DigitallySigned: hash 8, signature 7 (ed25519, RFC 8422), uint16 length, the signature.
    expect(head.signature.subarray(0, 4).toString('hex')).toBe('08070040');
    expect(verify(null, input, publicKey, head.signature.subarray(4))).toBe(true);
    expect(verifyTreeHead(publicKey, head)).toBe(true);
  });

  it('refuses a head whose size, time, root or signature was changed, or another key\'s', () => {
    const other = generateKeyPairSync('ed25519');
    const flipped = Buffer.from(head.signature);
    flipped[10]! ^= 1;
    for (const altered of [
      { ...head, treeSize: head.treeSize + 1 },
      { ...head, timestamp: head.timestamp - 1 },
      { ...head, rootHash: randomBytes(32) },
      { ...head, signature: flipped },
      { ...head, signature: head.signature.subarray(0, 20) },
      signTreeHead(other.privateKey, head.treeSize, head.timestamp, root),
    ]) {
      expect(verifyTreeHead(publicKey, altered)).toBe(false);
    }
  });

  it('round-trips through GET /-/log/head\'s JSON, and says what is wrong with a bad file', () => {
    const json = treeHeadJson(head);
    expect(json).toEqual({ tree_size: 1_000_000, timestamp: 1_764_460_800_123, sha256_root_hash: root.toString('base64'), tree_head_signature: head.signature.toString('base64') });
    expect(parseTreeHeadJson(JSON.stringify(json))).toEqual(head);
    expect(() => parseTreeHeadJson('nope')).toThrow('not JSON');
    expect(() => parseTreeHeadJson(JSON.stringify({ ...json, tree_size: -1 }))).toThrow('tree_size must be a whole number');
    expect(() => parseTreeHeadJson(JSON.stringify({ ...json, sha256_root_hash: 'AAAA' }))).toThrow('sha256_root_hash must be 32 bytes in base64');
  });
});

describe('FORGELOG_LOG_SIGNING_KEY(_FILE) and FORGELOG_LOG_HEAD_INTERVAL_MS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'forgelog-log-key-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has no key by default, and a head at most every minute', () => {
    expect(loadConfig({}).logHeads).toEqual({ signingKey: undefined, intervalMs: 60_000 });
  });

  it('reads the key from the variable or from a file', () => {
    const file = join(dir, 'key.pem');
    writeFileSync(file, pem);
    for (const env of [{ FORGELOG_LOG_SIGNING_KEY: pem }, { FORGELOG_LOG_SIGNING_KEY_FILE: file }]) {
      const { signingKey } = loadConfig({ ...env, FORGELOG_LOG_HEAD_INTERVAL_MS: '5000' }).logHeads;
      expect(publicKeyPem(signingKey!)).toBe(publicKeyPem(publicKey));
    }
    expect(loadConfig({ FORGELOG_LOG_HEAD_INTERVAL_MS: '5000' }).logHeads.intervalMs).toBe(5000);
  });

  it('refuses both at once, a missing file, a key that is not Ed25519, and a bad interval', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    expect(() => loadConfig({ FORGELOG_LOG_SIGNING_KEY: pem, FORGELOG_LOG_SIGNING_KEY_FILE: '/x' })).toThrow('set FORGELOG_LOG_SIGNING_KEY or FORGELOG_LOG_SIGNING_KEY_FILE, not both');
    expect(() => loadConfig({ FORGELOG_LOG_SIGNING_KEY_FILE: join(dir, 'missing.pem') })).toThrow(/^FORGELOG_LOG_SIGNING_KEY_FILE: cannot read ".*missing\.pem" \(ENOENT\)$/);
    expect(() => loadConfig({ FORGELOG_LOG_SIGNING_KEY: rsa })).toThrow('FORGELOG_LOG_SIGNING_KEY must be an Ed25519 private key, got rsa');
    expect(() => loadConfig({ FORGELOG_LOG_SIGNING_KEY: publicKeyPem(publicKey) })).toThrow('FORGELOG_LOG_SIGNING_KEY must be an Ed25519 private key in PEM (forgelog events keygen makes one)');
    expect(() => loadConfig({ FORGELOG_LOG_HEAD_INTERVAL_MS: 'soon' })).toThrow(/^FORGELOG_LOG_HEAD_INTERVAL_MS must be a whole number of milliseconds/);
  });
});
