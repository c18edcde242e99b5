import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inferenceEndpoint, reportedTokens, requestedOutputLimit } from './inference-endpoints.js';

test('only the inference paths of each provider are forwarded', () => {
  assert.deepEqual(inferenceEndpoint('anthropic', 'v1/messages'), { format: 'anthropic', billed: true });
  assert.deepEqual(inferenceEndpoint('anthropic', 'v1/messages/count_tokens'), { format: 'anthropic', billed: false });
  assert.deepEqual(inferenceEndpoint('openai', 'responses'), { format: 'openai-responses', billed: true });
  assert.deepEqual(inferenceEndpoint('openai', 'chat/completions'), { format: 'openai-chat', billed: true });
  assert.deepEqual(inferenceEndpoint('google', 'v1beta/models/gemini-2.5-pro:streamGenerateContent'), {
    format: 'gemini',
    billed: true,
    pathModel: 'gemini-2.5-pro',
  });
  assert.equal(inferenceEndpoint('google', 'v1beta/models/m:countTokens')?.billed, false);
  for (const [provider, rest] of [
    ['anthropic', 'v1/files'],
    ['anthropic', 'v1/messages/batches'],
    ['anthropic', 'v1/models'],
    ['openai', 'files'],
    ['openai', 'batches'],
    ['openai', 'responses/abc'],
    ['openai', 'constructor'],
    ['google', 'v1beta/files'],
    ['google', 'v1beta/models/m:batchGenerateContent'],
    ['google', 'v1beta/models/a/b:generateContent'],
    ['elsewhere', 'v1/messages'],
  ] as const)
    assert.equal(inferenceEndpoint(provider, rest), undefined, `${provider} ${rest}`);
});

test("each format's output limit and reported tokens, cached input and reasoning included", () => {
  assert.equal(requestedOutputLimit('anthropic', { max_tokens: 32000 }), 32000);
  assert.equal(requestedOutputLimit('openai-chat', { max_tokens: 10, max_completion_tokens: 20 }), 20);
  assert.equal(requestedOutputLimit('openai-responses', { max_output_tokens: 30 }), 30);
  assert.equal(requestedOutputLimit('gemini', { generationConfig: { maxOutputTokens: 40 } }), 40);
  assert.equal(requestedOutputLimit('anthropic', { max_tokens: 'lots' }), undefined);

  assert.deepEqual(
    reportedTokens('anthropic', {
      type: 'message_start',
      message: { usage: { input_tokens: 10, cache_read_input_tokens: 90, output_tokens: 1 } },
    }),
    { input: 100, output: 1 },
  );
  assert.deepEqual(reportedTokens('anthropic', { type: 'message_delta', usage: { output_tokens: 50 } }), {
    input: undefined,
    output: 50,
  });
  assert.deepEqual(reportedTokens('openai-chat', { usage: { prompt_tokens: 5, completion_tokens: 6 } }), {
    input: 5,
    output: 6,
  });
  assert.deepEqual(
    reportedTokens('openai-responses', {
      type: 'response.completed',
      response: { usage: { input_tokens: 7, output_tokens: 8 } },
    }),
    { input: 7, output: 8 },
  );
  assert.deepEqual(
    reportedTokens('gemini', {
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, thoughtsTokenCount: 5 },
    }),
    { input: 3, output: 9 },
  );
  assert.deepEqual(reportedTokens('gemini', { candidates: [] }), {});
  assert.deepEqual(reportedTokens('anthropic', null), {});
});
