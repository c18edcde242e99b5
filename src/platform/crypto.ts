import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

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
