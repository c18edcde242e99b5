import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  randomInt,
  timingSafeEqual,
} from 'node:crypto';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Uniformly random string over [A-Za-z0-9]; 22 characters carry about 131 bits. */
export function randomBase62(length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) out += BASE62[randomInt(BASE62.length)];
  return out;
}

/** Identifier for teams, users, environments and other named resources: exactly 22 of [A-Za-z0-9]. */
export function newUid(): string {
  return randomBase62(22);
}

/** Every Hangar API key starts with this, so a leaked key is recognisable by secret scanners. */
export const API_KEY_PREFIX = 'hgr_';

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBase62(40);
}

/** Worker keys (self-hosted workers' own credential) look different, so neither kind is mistaken for the other. */
export const WORKER_KEY_PREFIX = 'hgw_';

export function generateWorkerKey(): string {
  return WORKER_KEY_PREFIX + randomBase62(40);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** What is shown in key listings: enough to recognise a key, not enough to use it. */
export function apiKeyDisplayPrefix(key: string): string {
  return key.slice(0, Math.min(key.length, API_KEY_PREFIX.length + 6));
}

export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

export function hmacSha256(key: string | Buffer, data: string | Buffer): Buffer {
  return createHmac('sha256', key).update(data).digest();
}

export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Length of the key that encrypts team secrets at rest (AES-256). */
export const SECRET_KEY_BYTES = 32;

/**
 * Reads a secret-encryption key written as 64 hex characters or as base64 (standard or URL-safe) of 32 bytes.
 * Returns null for anything else, so callers can name the setting without echoing the value.
 */
export function parseSecretKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return null;
  const key = Buffer.from(trimmed, 'base64');
  return key.length === SECRET_KEY_BYTES ? key : null;
}

/** A value encrypted with AES-256-GCM: everything needed to decrypt it except the key and the context. */
export interface SealedValue {
  iv: Buffer;
  authTag: Buffer;
  ciphertext: Buffer;
}

/**
 * Encrypts with a fresh random 12-byte IV (never reused under one key). `context` is authenticated but not
 * stored: binding a ciphertext to where it belongs means it cannot be copied to another row and decrypted there.
 */
export function sealValue(key: Buffer, plaintext: string, context: string): SealedValue {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { iv, authTag: cipher.getAuthTag(), ciphertext };
}

/** Decrypts a sealed value; throws when the key or the context is wrong or the bytes were altered. */
export function openValue(key: Buffer, sealed: SealedValue, context: string): string {
  // A fixed tag length: otherwise a truncated tag would be accepted and be easier to forge.
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.iv, { authTagLength: 16 });
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(sealed.authTag);
  return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
}
