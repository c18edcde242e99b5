import type { AssistantContent, ModelMessage, ToolContent } from 'ai';
import { inputLine, parseEvent } from '../../../runs/index.js';
import type { TranscriptLine } from '../harness.js';

type AssistantPart = Exclude<AssistantContent, string>[number];
type ToolPart = ToolContent[number];

/**
 * The conversation of earlier executions as model messages, rebuilt from their transcript: what the user said
 * (the task and follow-ups) and what the agent did (text, tool calls and their results). Tool outputs are the ones
 * the events kept (long ones were cut), which is enough to go on from. Tool calls without a result (the execution
 * was stopped mid-step) are left out, since providers refuse a call nobody answered.
 */
export function historyMessages(lines: TranscriptLine[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  let assistant: AssistantPart[] = [];
  let results: ToolPart[] = [];

  const flush = () => {
    const answered = new Set(results.map((part) => (part.type === 'tool-result' ? part.toolCallId : '')));
    const parts = assistant.filter((part) => part.type !== 'tool-call' || answered.has(part.toolCallId));
    const called = new Set(parts.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])));
    if (parts.length > 0) messages.push({ role: 'assistant', content: parts });
    const kept = results.filter((part) => part.type === 'tool-result' && called.has(part.toolCallId));
    if (kept.length > 0) messages.push({ role: 'tool', content: kept });
    assistant = [];
    results = [];
  };
  const user = (text: string) => {
    flush();
    if (text.trim() !== '') messages.push({ role: 'user', content: text });
  };

  for (const { stream, line } of lines) {
    if (stream === 'input') {
      for (const text of inputLine(line)?.said ?? []) user(text);
      continue;
    }
    const event = parseEvent(line);
    if (!event) continue;
    if (event.type === 'text' || event.type === 'tool_call') {
      // A new step starts once the previous one's results are in.
      if (results.length > 0) flush();
      assistant.push(
        event.type === 'text'
          ? { type: 'text', text: event.text }
          : { type: 'tool-call', toolCallId: event.id, toolName: event.name, input: event.input ?? {} },
      );
    } else if (event.type === 'tool_result') {
      const failed = event.status === 'failed' || event.status === 'denied';
      const output = event.output ?? null;
      results.push({
        type: 'tool-result',
        toolCallId: event.id,
        toolName: event.name ?? 'tool',
        output: failed
          ? { type: 'error-text', value: typeof output === 'string' ? output : JSON.stringify(output) }
          : typeof output === 'string'
            ? { type: 'text', value: output }
            : { type: 'json', value: output as never },
      });
    }
  }
  flush();
  return messages;
}
