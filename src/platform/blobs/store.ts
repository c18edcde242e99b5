import type { Readable } from 'node:stream';

/**
 * Where bulky bytes live (artifact files, screenshots, plan text): not in the database. Keys are chosen by
 * Hangar (`artifacts/<uid>`), never by callers.
 */
export interface BlobStore {
  /** Stores the bytes under the key, replacing what was there; resolves once they are durable. */
  put(key: string, bytes: Buffer): Promise<void>;
  /** The bytes as a stream, or null when there is no such blob. */
  open(key: string): Promise<Readable | null>;
  read(key: string): Promise<Buffer | null>;
  delete(key: string): Promise<void>;
  /** Releases connections; called when the server stops. */
  close(): void;
}
