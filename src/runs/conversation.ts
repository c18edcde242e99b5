import { rfc3339 } from '../platform/time.js';
import { type HarnessEvent, inputLine, protocolEvents } from './harness-protocol.js';

/** The normalized conversation of wire-details.md: steps of messages of typed blocks. */
export type Block =
  | { type: 'text'; text: string }
  | { type: 'action'; id: string; category: string; name: string; input: unknown }
  | {
      type: 'action_result';
      action_id: string;
      category: string;
      name: string;
      state: 'running' | 'completed' | 'failed' | 'denied';
      output: unknown;
    }
  | { type: 'event'; name: string; data: unknown };

export interface Message {
  role: 'user' | 'assistant' | 'tool' | 'system';
  timestamp?: string;
  content: Block[];
}

export interface Step {
  id: string;
  description?: string;
  summary?: string;
  started_at?: string;
  completed_at?: string;
  messages: Message[];
  steps: Step[];
}

export interface Conversation {
  conversation_id: string;
  steps: Step[];
}

export interface TranscriptEntry {
  run_id: string;
  execution_id: number;
  stream: 'input' | 'output';
  line: string;
  at: Date;
}

const CATEGORIES = ['command', 'files', 'search', 'integration', 'documents', 'computer', 'review', 'skill'];

/** The action category of a tool: the one the harness gave when it is known, else a guess from the name. */
export function categoryOf(name: string, given: string | undefined): string {
  if (given && CATEGORIES.includes(given)) return given;
  const lower = name.toLowerCase();
  if (/bash|shell|exec|command|terminal|run/.test(lower)) return 'command';
  if (/grep|search|glob|find/.test(lower)) return 'search';
  if (/read|write|edit|file|patch|ls/.test(lower)) return 'files';
  if (/skill/.test(lower)) return 'skill';
  if (/review/.test(lower)) return 'review';
  return 'integration';
}

class StepBuilder {
  readonly step: Step;
  private current: Message | undefined;
  private readonly tools = new Map<string, { name: string; category: string }>();

  constructor(id: string, description: string) {
    this.step = { id, description, messages: [], steps: [] };
  }

  touch(at: Date): void {
    const time = rfc3339(at);
    this.step.started_at ??= time;
    this.step.completed_at = time;
  }

  /**
   * Appends a block to the open message of `role`, or opens a new one. A streamed piece of text (`join`) is added
   * to the text block before it; other texts are blocks of their own, which readers show apart.
   */
  add(role: Message['role'], block: Block, at: Date, join = false): void {
    if (!this.current || this.current.role !== role || role === 'user') {
      this.current = { role, timestamp: rfc3339(at), content: [] };
      this.step.messages.push(this.current);
    }
    const last = this.current.content[this.current.content.length - 1];
    if (join && block.type === 'text' && last?.type === 'text') last.text += block.text;
    else this.current.content.push(block);
  }

  input(line: string, at: Date): void {
    const input = inputLine(line);
    if (!input) return;
    if (input.kind === 'debug')
      this.step.description = 'Debug agent in the workspace kept after a failed environment setup';
    for (const text of input.said) this.add('user', { type: 'text', text }, at);
  }

  output(event: HarnessEvent, at: Date): void {
    switch (event.type) {
      case 'text':
        return this.add('assistant', { type: 'text', text: event.text }, at, event.delta === true);
      case 'tool_call': {
        const category = categoryOf(event.name, event.category);
        this.tools.set(event.id, { name: event.name, category });
        return this.add(
          'assistant',
          { type: 'action', id: event.id, category, name: event.name, input: event.input ?? null },
          at,
        );
      }
      case 'tool_result': {
        const call = this.tools.get(event.id);
        const name = event.name ?? call?.name ?? 'tool';
        return this.add(
          'tool',
          {
            type: 'action_result',
            action_id: event.id,
            category: call?.category ?? categoryOf(name, undefined),
            name,
            state: event.status ?? 'completed',
            output: event.output ?? null,
          },
          at,
        );
      }
      case 'artifact':
        return this.add(
          'assistant',
          { type: 'event', name: 'artifact', data: { artifact_type: event.artifact_type, data: event.data } },
          at,
        );
      case 'ask_user':
        return this.add('assistant', { type: 'event', name: 'ask_user', data: { question: event.question } }, at);
      case 'failed':
        return this.add(
          'assistant',
          {
            type: 'event',
            name: 'failed',
            data: { message: event.message, ...(event.error_code ? { error_code: event.error_code } : {}) },
          },
          at,
        );
      case 'done':
        if (event.summary) this.step.summary = event.summary;
        return;
      case 'usage':
        return;
    }
  }
}

/**
 * Turns the transcript of a conversation (every execution of its runs, in order) into the normalized
 * conversation: one step per execution, holding the user's messages, the agent's text and tool activity.
 */
export function normalizeConversation(
  conversationId: string,
  entries: TranscriptEntry[],
  /** The events on an output line of the entry's run: the protocol's, or its harness's own stream format translated. */
  eventsOf: (entry: TranscriptEntry) => HarnessEvent[] = (entry) => protocolEvents(entry.line),
): Conversation {
  const steps = new Map<string, StepBuilder>();
  for (const entry of entries) {
    const key = `${entry.run_id}/${entry.execution_id}`;
    let builder = steps.get(key);
    if (!builder) {
      builder = new StepBuilder(
        key,
        entry.execution_id === 1 ? 'Run' : `Continuation (execution ${entry.execution_id})`,
      );
      steps.set(key, builder);
    }
    builder.touch(entry.at);
    if (entry.stream === 'input') {
      builder.input(entry.line, entry.at);
    } else {
      for (const event of eventsOf(entry)) builder.output(event, entry.at);
    }
  }
  return { conversation_id: conversationId, steps: [...steps.values()].map((builder) => builder.step) };
}
