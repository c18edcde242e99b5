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
 * OpenAI Responses (`POST /v1/responses`), streaming (typed SSE events: response.created, output_item.added,
 * output_text.delta, function_call_arguments.delta, output_item.done, response.completed) and not, with function
 * calls as `function_call` output items. Point clients at `baseURL`.
 */
export class OpenAIResponsesServer extends ScriptedModelServer {
  constructor() {
    super([{ method: 'POST', path: /^\/v1\/responses$/, write }], (message) => ({
      error: { message, type: 'invalid_request_error', param: null, code: 'scripted' },
    }));
  }

  get baseURL(): string {
    return `${this.url}/v1`;
  }

  static async start(...turns: ScriptedTurn[]): Promise<OpenAIResponsesServer> {
    return (await new OpenAIResponsesServer().listen()).script(...turns);
  }
}

const write: TurnWriter = (request, turn, response, index) => {
  const model = String(request.body?.model ?? 'scripted');
  const id = `resp_${index}`;
  const created_at = Math.floor(Date.now() / 1000);
  const usage = usageOf(turn);
  const wireUsage = {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.input + usage.output,
  };
  const message =
    turn.text !== undefined
      ? {
          type: 'message',
          id: `msg_${index}`,
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: turn.text, annotations: [], logprobs: [] }],
        }
      : null;
  const calls = (turn.toolCalls ?? []).map((call, callIndex) => ({
    type: 'function_call',
    id: `fc_${index}_${callIndex}`,
    call_id: callId(call, index, callIndex, 'call'),
    name: call.name,
    ...(call.namespace ? { namespace: call.namespace } : {}),
    arguments: JSON.stringify(call.input),
    status: 'completed',
  }));
  const output = [...(message ? [message] : []), ...calls];
  const base = {
    id,
    object: 'response',
    created_at,
    model,
    error: null,
    incomplete_details: null,
    tools: [],
    parallel_tool_calls: true,
  };
  const completed = { ...base, status: 'completed', output, usage: wireUsage };

  if (request.body?.stream !== true) {
    json(response, completed);
    return;
  }

  startSse(response);
  let sequence = 0;
  const event = (data: Record<string, unknown>) =>
    sse(response, { ...data, sequence_number: sequence++ }, String(data.type));
  event({ type: 'response.created', response: { ...base, status: 'in_progress', output: [], usage: null } });
  event({ type: 'response.in_progress', response: { ...base, status: 'in_progress', output: [], usage: null } });
  let outputIndex = 0;
  if (message) {
    const at = outputIndex++;
    event({
      type: 'response.output_item.added',
      output_index: at,
      item: { ...message, status: 'in_progress', content: [] },
    });
    event({
      type: 'response.content_part.added',
      item_id: message.id,
      output_index: at,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const piece of pieces(turn.text ?? '')) {
      event({
        type: 'response.output_text.delta',
        item_id: message.id,
        output_index: at,
        content_index: 0,
        delta: piece,
        logprobs: [],
      });
    }
    event({
      type: 'response.output_text.done',
      item_id: message.id,
      output_index: at,
      content_index: 0,
      text: turn.text,
      logprobs: [],
    });
    event({
      type: 'response.content_part.done',
      item_id: message.id,
      output_index: at,
      content_index: 0,
      part: message.content[0],
    });
    event({ type: 'response.output_item.done', output_index: at, item: message });
  }
  for (const call of calls) {
    const at = outputIndex++;
    event({
      type: 'response.output_item.added',
      output_index: at,
      item: { ...call, arguments: '', status: 'in_progress' },
    });
    for (const piece of pieces(call.arguments, 12)) {
      event({ type: 'response.function_call_arguments.delta', item_id: call.id, output_index: at, delta: piece });
    }
    event({
      type: 'response.function_call_arguments.done',
      item_id: call.id,
      output_index: at,
      arguments: call.arguments,
    });
    event({ type: 'response.output_item.done', output_index: at, item: call });
  }
  event({ type: 'response.completed', response: completed });
  response.end();
};
