import { generateKeyPairSync } from 'node:crypto';
import sshpk from 'sshpk';

/** A key pair's public half in OpenSSH's one-line format, made fresh with node:crypto. */
export type TestKeyKind = 'rsa1024' | 'rsa2048' | 'dsa' | 'ecdsa256' | 'ecdsa384' | 'ecdsa521' | 'ed25519';

const SPECS: Record<TestKeyKind, () => ReturnType<typeof generateKeyPairSync>> = {
  rsa1024: () => generateKeyPairSync('rsa', { modulusLength: 1024 }),
  rsa2048: () => generateKeyPairSync('rsa', { modulusLength: 2048 }),
  dsa: () => generateKeyPairSync('dsa', { modulusLength: 1024, divisorLength: 160 }),
  ecdsa256: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  ecdsa384: () => generateKeyPairSync('ec', { namedCurve: 'P-384' }),
  ecdsa521: () => generateKeyPairSync('ec', { namedCurve: 'P-521' }),
  ed25519: () => generateKeyPairSync('ed25519'),
};

export function sshPublicKey(kind: TestKeyKind = 'ed25519', comment = 'deploy@forgelog'): string {
  const { publicKey } = SPECS[kind]();
  const key = sshpk.parseKey(publicKey.export({ type: 'spki', format: 'pem' }), 'pem');
  key.comment = comment;
  return key.toString('ssh');
}
