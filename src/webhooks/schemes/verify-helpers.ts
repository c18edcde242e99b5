import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SchemeVerdict, SignedDelivery } from './scheme.js';

/** Building blocks shared by the schemes: header reading, HMAC over raw bytes, constant-time comparison. */

export const OK: SchemeVerdict = { ok: true };
export const MISMATCH: SchemeVerdict = { ok: false, reason: 'signature does not match' };

export function fail(reason: string): SchemeVerdict {
  return { ok: false, reason };
}

export type HeaderRead = { ok: true; value: string } | { ok: false; reason: string };

/** One header's trimmed value; `label` is the provider's spelling, for the reason. */
export function readHeader(delivery: SignedDelivery, name: string, label: string): HeaderRead {
  let value = delivery.headers[name];
  // A repeated signature header is ambiguous (which one did the provider send?), so it is refused, not merged.
  if (Array.isArray(value)) {
    if (value.length > 1) return { ok: false, reason: `more than one ${label} header` };
    value = value[0];
  }
  const trimmed = value?.trim();
  if (!trimmed) return { ok: false, reason: `missing ${label} header` };
  return { ok: true, value: trimmed };
}

/** HMAC of the parts in order; Buffers go in as they are, so the body is signed byte for byte. */
export function hmac(algorithm: 'sha1' | 'sha256', key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** Hex of exactly `bytes` bytes, decoded; null when it is not (Buffer.from would silently stop at a bad digit). */
export function parseHex(text: string, bytes: number): Buffer | null {
  if (text.length !== bytes * 2 || !/^[0-9a-f]+$/i.test(text)) return null;
  return Buffer.from(text, 'hex');
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Standard (not URL-safe) base64, padding optional; null when it is not (Buffer.from would skip bad characters). */
export function parseBase64(text: string): Buffer | null {
  if (!BASE64.test(text) || text.replace(/=+$/, '').length % 4 === 1) return null;
  return Buffer.from(text, 'base64');
}

/** Whether any candidate equals the expected MAC, compared in constant time. */
export function matchesAny(expected: Buffer, candidates: readonly Buffer[]): boolean {
  return candidates.some((candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected));
}

export const TOLERANCE_SECONDS = 5 * 60;

/** Unix seconds from a header, or null when it is not a plain non-negative integer. */
export function parseUnixSeconds(text: string): number | null {
  return /^\d{1,15}$/.test(text) ? Number(text) : null;
}

/** Why a signed timestamp is outside the replay window around `now`, or null when it is inside (bounds included). */
export function timestampProblem(seconds: number, now: Date): string | null {
  const age = Math.floor(now.getTime() / 1000) - seconds;
  if (age > TOLERANCE_SECONDS) return 'timestamp is older than 5 minutes';
  if (age < -TOLERANCE_SECONDS) return 'timestamp is more than 5 minutes in the future';
  return null;
}
