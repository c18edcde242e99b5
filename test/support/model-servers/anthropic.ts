import {
  callId,
  json,
  pieces,
  ScriptedModelServer,
  type ScriptedTurn,
  sse,
  startSse,
  type TurnWriter,
  usageOf,
} from './scripted.js';

/**
 * Anthropic Messages (`POST /v1/messages`), streaming (message_start, content_block_start / _delta / _stop,
 * message_delta, message_stop) and not, with `tool_use` content blocks. Point clients at `baseURL`.
 */
export class AnthropicServer extends ScriptedModelServer {
  constructor() {
    super([{ method: 'POST', path: /^\/v1\/messages$/, write }], (message) => ({
      type: 'error',
      error: { type: 'invalid_request_error', message },
    }));
  }

  get baseURL(): string {
    return `${this.url}/v1`;
  }

  static async start(...turns: ScriptedTurn[]): Promise<AnthropicServer> {
    return (await new AnthropicServer().listen()).script(...turns);
  }
}

const write: TurnWriter = (request, turn, response, index) => {
  const model = String(request.body?.model ?? 'scripted');
  const id = `msg_${index}`;
  const usage = usageOf(turn);
  const content: Array<Record<string, unknown>> = [];
  if (turn.text !== undefined) content.push({ type: 'text', text: turn.text });
  (turn.toolCalls ?? []).forEach((call, callIndex) =>
    content.push({ type: 'tool_use', id: callId(call, index, callIndex, 'toolu'), name: call.name, input: call.input }),
  );
  const stopReason = (turn.toolCalls ?? []).length > 0 ? 'tool_use' : 'end_turn';

  if (request.body?.stream !== true) {
    json(response, {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input,
        output_tokens: usage.output,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
    return;
  }

  startSse(response);
  const event = (data: Record<string, unknown>) => sse(response, data, String(data.type));
  event({
    type: 'message_start',
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: usage.input,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    },
  });
  content.forEach((block, blockIndex) => {
    if (block.type === 'text') {
      event({ type: 'content_block_start', index: blockIndex, content_block: { type: 'text', text: '' } });
      event({ type: 'ping' });
      for (const piece of pieces(String(block.text)))
        event({ type: 'content_block_delta', index: blockIndex, delta: { type: 'text_delta', text: piece } });
    } else {
      event({
        type: 'content_block_start',
        index: blockIndex,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      for (const piece of pieces(JSON.stringify(block.input), 12))
        event({
          type: 'content_block_delta',
          index: blockIndex,
          delta: { type: 'input_json_delta', partial_json: piece },
        });
    }
    event({ type: 'content_block_stop', index: blockIndex });
  });
  event({
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: usage.output },
  });
  event({ type: 'message_stop' });
  response.end();
};
