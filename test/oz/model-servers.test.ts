import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, type LanguageModel, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import {
  AnthropicServer,
  GeminiServer,
  OpenAIChatServer,
  OpenAIResponsesServer,
  type ScriptedModelServer,
} from '../support/model-servers/index.js';

// Each scripted server is driven by the real AI SDK provider for its protocol: a tool call, its result sent
// back, then a final answer, both streaming and not. If the wire format were wrong, the provider would not parse it.

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;
const servers: ScriptedModelServer[] = [];
after(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

const weather = tool({
  description: 'The weather in a city',
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, forecast: 'sunny' }),
});

function script<T extends ScriptedModelServer>(server: T): T {
  servers.push(server);
  return server.script(
    {
      text: 'Let me check.',
      toolCalls: [{ name: 'weather', input: { city: 'Paris' } }],
      usage: { input: 20, output: 7 },
    },
    { text: 'It is sunny in Paris.', usage: { input: 30, output: 9 } },
  );
}

async function exercise(server: ScriptedModelServer, model: LanguageModel, streaming: boolean) {
  const options = { model, prompt: 'Weather in Paris?', tools: { weather }, stopWhen: stepCountIs(5), maxRetries: 0 };
  let text: string;
  let steps: Array<{ toolCalls: Array<{ toolName: string; input: unknown }> }>;
  let usage: { inputTokens: number | undefined; outputTokens: number | undefined };
  if (streaming) {
    const result = streamText({ ...options, onError: () => {} });
    text = await result.text;
    steps = await result.steps;
    usage = await result.totalUsage;
  } else {
    const result = await generateText(options);
    text = result.text;
    steps = result.steps;
    usage = result.totalUsage;
  }
  assert.equal(text, 'It is sunny in Paris.');
  assert.equal(steps.length, 2);
  assert.equal(steps[0]!.toolCalls[0]!.toolName, 'weather');
  assert.deepEqual(steps[0]!.toolCalls[0]!.input, { city: 'Paris' });
  assert.equal(usage.inputTokens, 50);
  assert.equal(usage.outputTokens, 16);
  assert.equal(server.requests.length, 2);
  assert.equal(server.remaining, 0);
  // The second request carried the tool's result.
  assert.match(JSON.stringify(server.requests[1]!.body), /sunny/);
  return server.requests;
}

for (const streaming of [false, true]) {
  const mode = streaming ? 'streaming' : 'non-streaming';

  describe(`scripted model servers (${mode})`, () => {
    test('OpenAI Chat Completions, through @ai-sdk/openai (chat)', async () => {
      const server = script(await new OpenAIChatServer().listen());
      const openai = createOpenAI({ baseURL: server.baseURL, apiKey: 'test-key' });
      const requests = await exercise(server, openai.chat('gpt-test'), streaming);
      assert.equal(requests[0]!.body.model, 'gpt-test');
      assert.equal(requests[0]!.body.tools[0].function.name, 'weather');
      assert.equal(requests[0]!.headers.authorization, 'Bearer test-key');
      const toolMessage = requests[1]!.body.messages.find((message: { role: string }) => message.role === 'tool');
      assert.equal(toolMessage.tool_call_id, 'call_0_0');
    });

    test('OpenAI-compatible Chat Completions, through @ai-sdk/openai-compatible', async () => {
      const server = script(await new OpenAIChatServer().listen());
      const provider = createOpenAICompatible({ name: 'local', baseURL: server.baseURL, includeUsage: true });
      const requests = await exercise(server, provider.chatModel('llama-test'), streaming);
      assert.equal(requests[0]!.body.model, 'llama-test');
      assert.ok(requests[1]!.body.messages.some((message: { role: string }) => message.role === 'tool'));
    });

    test('OpenAI Responses, through @ai-sdk/openai (responses)', async () => {
      const server = script(await new OpenAIResponsesServer().listen());
      const openai = createOpenAI({ baseURL: server.baseURL, apiKey: 'test-key' });
      const requests = await exercise(server, openai.responses('gpt-test'), streaming);
      assert.equal(requests[0]!.body.tools[0].name, 'weather');
      const output = requests[1]!.body.input.find((item: { type?: string }) => item.type === 'function_call_output');
      assert.equal(output.call_id, 'call_0_0');
    });

    test('Anthropic Messages, through @ai-sdk/anthropic', async () => {
      const server = script(await new AnthropicServer().listen());
      const anthropic = createAnthropic({ baseURL: server.baseURL, apiKey: 'test-key' });
      const requests = await exercise(server, anthropic('claude-test'), streaming);
      assert.equal(requests[0]!.headers['x-api-key'], 'test-key');
      assert.equal(requests[0]!.body.tools[0].name, 'weather');
      const results = requests[1]!.body.messages.flatMap((message: { content: unknown }) =>
        Array.isArray(message.content) ? message.content : [],
      );
      assert.ok(
        results.some(
          (block: { type: string; tool_use_id?: string }) =>
            block.type === 'tool_result' && block.tool_use_id === 'toolu_0_0',
        ),
      );
    });

    test('Gemini generateContent, through @ai-sdk/google', async () => {
      const server = script(await new GeminiServer().listen());
      const google = createGoogleGenerativeAI({ baseURL: server.baseURL, apiKey: 'test-key' });
      const requests = await exercise(server, google('gemini-2.5-flash'), streaming);
      assert.match(
        requests[0]!.url,
        streaming
          ? /^\/v1beta\/models\/gemini-2.5-flash:streamGenerateContent\?alt=sse$/
          : /^\/v1beta\/models\/gemini-2.5-flash:generateContent$/,
      );
      assert.equal(requests[0]!.body.tools[0].functionDeclarations[0].name, 'weather');
      const parts = requests[1]!.body.contents.flatMap((content: { parts: unknown[] }) => content.parts);
      assert.ok(
        parts.some((part: { functionResponse?: { name: string } }) => part.functionResponse?.name === 'weather'),
      );
    });
  });
}

test('a server with no turn left answers an error the client reports', async () => {
  const server = await new AnthropicServer().listen();
  servers.push(server);
  const anthropic = createAnthropic({ baseURL: server.baseURL, apiKey: 'k' });
  await assert.rejects(generateText({ model: anthropic('claude-test'), prompt: 'hi', maxRetries: 0 }), /no turn left/);
});
