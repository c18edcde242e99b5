import { constantTimeEqual, hmacSha256 } from '../../platform/crypto.js';

const PREFIX = 'hgt_';

/**
 * The credential a running harness gets for its own run's harness-support calls: the run ID and execution
 * signed with an instance key, so it names exactly one execution and needs no storage.
 */
export class TaskTokens {
  constructor(private readonly key: string) {}

  issue(runId: string, executionId: number): string {
    const subject = `${runId}.${executionId}`;
    return `${PREFIX}${subject}.${hmacSha256(this.key, subject).toString('base64url')}`;
  }

  /** The run and execution a token was issued for, or null when it is not one of ours. */
  verify(token: string): { runId: string; executionId: number } | null {
    if (!token.startsWith(PREFIX)) return null;
    const body = token.slice(PREFIX.length);
    const lastDot = body.lastIndexOf('.');
    const subject = body.slice(0, lastDot);
    const signature = Buffer.from(body.slice(lastDot + 1), 'base64url');
    if (lastDot < 0 || !constantTimeEqual(signature, hmacSha256(this.key, subject))) return null;
    const split = subject.lastIndexOf('.');
    const executionId = Number(subject.slice(split + 1));
    if (split < 0 || !Number.isInteger(executionId)) return null;
    return { runId: subject.slice(0, split), executionId };
  }
}
