import { constantTimeEqual, hmacSha256 } from '../../platform/crypto.js';

const PREFIX = 'hgx_';

/** One execution of one run: what an execution credential names. */
export interface ExecutionRef {
  runId: string;
  executionId: number;
}

/**
 * The credential a run pod (docs/kubernetes.md) opens the worker websocket with: the run and execution signed with
 * an instance key of its own, so it names exactly one execution, needs no storage, and is neither a worker key nor a
 * task token (another prefix and another key). The server gives the session it opens that execution and nothing
 * else: no other run's messages, no offers (src/workers/hub.ts).
 */
export class ExecutionCredentials {
  constructor(private readonly key: string) {}

  issue(runId: string, executionId: number): string {
    const subject = `${runId}.${executionId}`;
    return `${PREFIX}${subject}.${hmacSha256(this.key, subject).toString('base64url')}`;
  }

  /** Whether a bearer looks like an execution credential (it is then checked as one, never as a worker key). */
  static looksLike(token: string): boolean {
    return token.startsWith(PREFIX);
  }

  /** The execution a credential was issued for, or null when it is not one of this instance's. */
  verify(token: string): ExecutionRef | null {
    if (!token.startsWith(PREFIX)) return null;
    const body = token.slice(PREFIX.length);
    const lastDot = body.lastIndexOf('.');
    if (lastDot < 0) return null;
    const subject = body.slice(0, lastDot);
    const signature = Buffer.from(body.slice(lastDot + 1), 'base64url');
    if (!constantTimeEqual(signature, hmacSha256(this.key, subject))) return null;
    const split = subject.lastIndexOf('.');
    const executionId = Number(subject.slice(split + 1));
    if (split <= 0 || !Number.isInteger(executionId) || executionId < 1) return null;
    return { runId: subject.slice(0, split), executionId };
  }
}
