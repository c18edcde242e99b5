import { z } from 'zod';
import type { HarnessEvent } from '../../../runs/index.js';

/**
 * One line of a CLI's JSON stream read as `schema` says, or undefined for anything else: not JSON, another line
 * type, a shape this version of the CLI does not write. Translators never throw on what a CLI prints.
 */
export function parseLine<T>(schema: z.ZodType<T>, line: string): T | undefined {
  if (!line.startsWith('{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : undefined;
}

/** The protocol caps a progress message at 2000 characters. */
const PROGRESS_MAX = 2000;

/** A CLI's non-fatal notice (a warning, a retried error) as a progress event, which shows on the timeline. */
export function notice(message: string): HarnessEvent {
  return {
    type: 'progress',
    message: message.length > PROGRESS_MAX ? `${message.slice(0, PROGRESS_MAX - 1)}…` : message,
  };
}

/** A usage event with the counts the CLI reported (none of them undefined, as the protocol's JSON would have it). */
export function usageEvent(counts: { input?: number; output?: number; cost?: number }): HarnessEvent {
  return {
    type: 'usage',
    ...(counts.input !== undefined ? { input_tokens: counts.input } : {}),
    ...(counts.output !== undefined ? { output_tokens: counts.output } : {}),
    ...(counts.cost !== undefined ? { inference_cost: counts.cost } : {}),
  };
}

const ProviderError = z.object({ error: z.object({ message: z.string() }) });

/**
 * The message inside a provider's error body when a CLI passes the body on as its message (codex as it is, Gemini
 * CLI as `[API Error: {...}]`); else the message as it is.
 */
export function providerMessage(message: string): string {
  const body = parseLine(ProviderError, message.slice(message.indexOf('{'), message.lastIndexOf('}') + 1));
  return body?.error.message ?? message;
}
