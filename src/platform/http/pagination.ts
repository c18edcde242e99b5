import { constantTimeEqual, hmacSha256 } from '../crypto.js';

export type CursorValue = string | number | boolean | null;

/** What a keyset cursor remembers: which ordering it belongs to and the sort key of the last row served. */
export interface CursorPosition {
  /** Identifies the ordering (for example `updated_at:desc`); a cursor is only valid for the same one. */
  ordering: string;
  values: CursorValue[];
}

export class InvalidCursorError extends Error {}

const MAC_BYTES = 16;

/**
 * Cursors are opaque to clients and signed, so a tampered cursor is refused instead of silently serving an
 * arbitrary page. The signing key is shared by all replicas through the database.
 */
export class CursorCodec {
  constructor(private readonly key: string) {}

  encode(position: CursorPosition): string {
    const payload = Buffer.from(JSON.stringify([position.ordering, position.values]), 'utf8');
    const mac = hmacSha256(this.key, payload).subarray(0, MAC_BYTES);
    return `${payload.toString('base64url')}.${mac.toString('base64url')}`;
  }

  decode(cursor: string, expectedOrdering: string): CursorValue[] {
    const [payloadText, macText, extra] = cursor.split('.');
    if (!payloadText || !macText || extra !== undefined) throw new InvalidCursorError('cursor is malformed');
    const payload = Buffer.from(payloadText, 'base64url');
    const expectedMac = hmacSha256(this.key, payload).subarray(0, MAC_BYTES);
    if (!constantTimeEqual(Buffer.from(macText, 'base64url'), expectedMac)) {
      throw new InvalidCursorError('cursor is not valid (it was altered or comes from another server)');
    }
    const decoded = JSON.parse(payload.toString('utf8')) as [string, CursorValue[]];
    if (decoded[0] !== expectedOrdering) {
      throw new InvalidCursorError(
        `cursor belongs to the ordering ${decoded[0]}, not ${expectedOrdering}; start again without it`,
      );
    }
    return decoded[1];
  }
}
