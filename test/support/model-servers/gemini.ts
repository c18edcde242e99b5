import {
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
 * Gemini (`POST /v1beta/models/{model}:generateContent`, and `:streamGenerateContent?alt=sse` as SSE
 * GenerateContentResponse chunks), with `functionCall` parts. Point clients at `baseURL`.
 */
export class GeminiServer extends ScriptedModelServer {
  constructor() {
    super(
      [
        { method: 'POST', path: /^\/v1beta\/models\/[^/:]+:generateContent$/, write: write(false) },
        { method: 'POST', path: /^\/v1beta\/models\/[^/:]+:streamGenerateContent$/, write: write(true) },
      ],
      (message) => ({ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }),
    );
  }

  get baseURL(): string {
    return `${this.url}/v1beta`;
  }

  static async start(...turns: ScriptedTurn[]): Promise<GeminiServer> {
    return (await new GeminiServer().listen()).script(...turns);
  }
}

const write =
  (streaming: boolean): TurnWriter =>
  (request, turn, response) => {
    const usage = usageOf(turn);
    const usageMetadata = {
      promptTokenCount: usage.input,
      candidatesTokenCount: usage.output,
      totalTokenCount: usage.input + usage.output,
    };
    const modelVersion = decodeURIComponent(request.url.split('/models/')[1]?.split(':')[0] ?? 'scripted');
    const calls = (turn.toolCalls ?? []).map((call) => ({ functionCall: { name: call.name, args: call.input } }));
    const candidate = (parts: unknown[], finishReason?: string) => ({
      content: { role: 'model', parts },
      ...(finishReason ? { finishReason } : {}),
      index: 0,
    });

    if (!streaming) {
      json(response, {
        candidates: [candidate([...(turn.text !== undefined ? [{ text: turn.text }] : []), ...calls], 'STOP')],
        usageMetadata,
        modelVersion,
      });
      return;
    }
    if (!new URL(request.url, 'http://x').searchParams.has('alt')) {
      // Without alt=sse Gemini streams a JSON array; the clients here always ask for SSE.
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          error: { code: 400, message: 'the scripted server streams only with alt=sse', status: 'INVALID_ARGUMENT' },
        }),
      );
      return;
    }
    startSse(response);
    const textPieces = turn.text !== undefined ? pieces(turn.text) : [];
    // The last text piece, or the function calls (Gemini sends them whole), go with the finish reason and the usage.
    const last = calls.length > 0 ? calls : textPieces.splice(-1).map((text) => ({ text }));
    textPieces.forEach((piece) =>
      sse(response, {
        candidates: [candidate([{ text: piece }])],
        usageMetadata: { promptTokenCount: usage.input },
        modelVersion,
      }),
    );
    sse(response, { candidates: [candidate(last, 'STOP')], usageMetadata, modelVersion });
    response.end();
  };
