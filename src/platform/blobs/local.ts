import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { BlobStore } from './store.js';

const KEY = /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_.-]+)*$/;

/** Blobs as files under a directory (the data directory's `blobs/`): written to a temporary name, then renamed. */
export class LocalBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private file(key: string): string {
    if (!KEY.test(key) || key.split('/').some((part) => part === '..' || part === '.'))
      throw new Error(`not a blob key: ${key}`);
    return path.join(this.root, key);
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    const file = this.file(key);
    await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await fs.promises.open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.promises.rename(temporary, file);
  }

  async open(key: string): Promise<Readable | null> {
    const file = this.file(key);
    try {
      const handle = await fs.promises.open(file, 'r');
      return handle.createReadStream();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async read(key: string): Promise<Buffer | null> {
    try {
      return await fs.promises.readFile(this.file(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await fs.promises.rm(this.file(key), { force: true });
  }

  close(): void {
    // Files hold nothing open between calls.
  }
}
