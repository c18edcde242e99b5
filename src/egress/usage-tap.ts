import { createParser, type EventSourceParser } from 'eventsource-parser';
import { reportedTokens, type UsageFormat } from './inference-endpoints.js';

/** The most of a JSON answer kept to read its usage; a larger one is passed on unread (and charged its estimate). */
const MAX_JSON_ANSWER_BYTES = 32 * 1024 * 1024;

export interface TokensSoFar {
  input: number;
  output: number;
}

/**
 * Reads the usage of a model's answer as it passes through the proxy, without holding it back: a server-sent
 * event stream event by event (each usage it carries is reported at once, so a long stream is charged while it
 * goes), a JSON answer (Gemini's streamed JSON array included) when it is complete.
 */
export class UsageTap {
  private readonly tokens: { input?: number; output?: number } = {};
  private readonly parser: EventSourceParser | undefined;
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private reported = false;

  constructor(
    private readonly format: UsageFormat,
    contentType: string | undefined,
    private readonly onTokens: (tokens: TokensSoFar) => void,
  ) {
    if (contentType?.toLowerCase().includes('text/event-stream'))
      this.parser = createParser({ onEvent: (event) => this.read(event.data) });
  }

  /** Whether any usage was read from the answer. */
  get found(): boolean {
    return this.reported;
  }

  push(chunk: Buffer): void {
    if (this.parser) {
      this.parser.feed(chunk.toString('utf8'));
      return;
    }
    this.bytes += chunk.length;
    if (this.bytes <= MAX_JSON_ANSWER_BYTES) this.chunks.push(chunk);
  }

  /** The answer is complete: a JSON one is read now. */
  end(): void {
    if (this.parser || this.bytes > MAX_JSON_ANSWER_BYTES) return;
    const text = Buffer.concat(this.chunks).toString('utf8');
    this.chunks.length = 0;
    this.read(text);
  }

  private read(text: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return; // not JSON (an SSE comment or [DONE]): nothing to read
    }
    for (const event of Array.isArray(parsed) ? parsed : [parsed]) {
      const { input, output } = reportedTokens(this.format, event);
      let grew = false;
      if (input !== undefined && input > (this.tokens.input ?? -1)) {
        this.tokens.input = input;
        grew = true;
      }
      if (output !== undefined && output > (this.tokens.output ?? -1)) {
        this.tokens.output = output;
        grew = true;
      }
      if (!grew) continue;
      this.reported = true;
      this.onTokens({ input: this.tokens.input ?? 0, output: this.tokens.output ?? 0 });
    }
  }
}
