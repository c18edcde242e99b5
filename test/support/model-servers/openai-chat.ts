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
 * OpenAI Chat Completions (`POST /v1/chat/completions`), streaming (SSE chunks ending in `data: [DONE]`) and not,
 * with `tool_calls`. Also what OpenAI-compatible servers (Ollama, vLLM) speak. Point clients at `baseURL`.
 */
export class OpenAIChatServer extends ScriptedModelServer {
  constructor() {
    super([{ method: 'POST', path: /^\/v1\/chat\/completions$/, write }], (message) => ({
      error: { message, type: 'invalid_request_error', param: null, code: null },
    }));
  }

  get baseURL(): string {
    return `${this.url}/v1`;
  }

  static async start(...turns: ScriptedTurn[]): Promise<OpenAIChatServer> {
    return (await new OpenAIChatServer().listen()).script(...turns);
  }
}

const write: TurnWriter = (request, turn, response, index) => {
  const model = String(request.body?.model ?? 'scripted');
  const id = `chatcmpl-${index}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = usageOf(turn);
  const wireUsage = {
    prompt_tokens: usage.input,
    completion_tokens: usage.output,
    total_tokens: usage.input + usage.output,
  };
  const calls = (turn.toolCalls ?? []).map((call, callIndex) => ({
    id: callId(call, index, callIndex, 'call'),
    type: 'function' as const,
    function: { name: call.name, arguments: JSON.stringify(call.input) },
  }));
  const finish = calls.length > 0 ? 'tool_calls' : 'stop';

  if (request.body?.stream !== true) {
    json(response, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: turn.text ?? null,
            ...(calls.length > 0 ? { tool_calls: calls } : {}),
          },
          finish_reason: finish,
          logprobs: null,
        },
      ],
      usage: wireUsage,
    });
    return;
  }

  startSse(response);
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
    sse(response, {
      id,
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }],
    });
  chunk({ role: 'assistant', content: '' });
  if (turn.text) for (const piece of pieces(turn.text)) chunk({ content: piece });
  calls.forEach((call, callIndex) => {
    // The name and ID come first, the arguments in pieces after, as OpenAI streams them.
    chunk({
      tool_calls: [
        { index: callIndex, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
      ],
    });
    for (const piece of pieces(call.function.arguments, 12))
      chunk({ tool_calls: [{ index: callIndex, function: { arguments: piece } }] });
  });
  chunk({}, finish);
  if (request.body?.stream_options?.include_usage)
    sse(response, { id, object: 'chat.completion.chunk', created, model, choices: [], usage: wireUsage });
  sse(response, '[DONE]');
  response.end();
};
