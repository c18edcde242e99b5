import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { BlobStore } from './store.js';

export interface S3BlobOptions {
  bucket: string;
  /** Keys are stored under this prefix (e.g. `hangar/`), so a bucket can be shared. */
  prefix: string;
  region: string;
  /** An S3-compatible server (MinIO, Ceph, R2, ...); unset for AWS itself. */
  endpoint: string | undefined;
  /** Bucket in the path rather than the host name, as most S3-compatible servers want. */
  forcePathStyle: boolean;
  /** Unset: the SDK's default chain (environment, shared files, instance roles). */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
}

/** Blobs in an S3 bucket through the AWS SDK. Downloads still go through Hangar's signed links. */
export class S3BlobStore implements BlobStore {
  private readonly client: S3Client;

  constructor(private readonly options: S3BlobOptions) {
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
    });
  }

  private key(key: string): string {
    return `${this.options.prefix}${key}`;
  }

  async put(key: string, bytes: Buffer): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: this.key(key), Body: bytes }));
  }

  async open(key: string): Promise<Readable | null> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) }));
      return (object.Body as Readable | undefined) ?? null;
    } catch (error) {
      if (error instanceof NoSuchKey) return null;
      throw error;
    }
  }

  async read(key: string): Promise<Buffer | null> {
    const stream = await this.open(key);
    if (!stream) return null;
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) }));
  }

  close(): void {
    this.client.destroy();
  }
}
