import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type TokensSoFar, UsageTap } from './usage-tap.js';

function tap(format: ConstructorParameters<typeof UsageTap>[0], contentType: string) {
  const seen: TokensSoFar[] = [];
  return { tap: new UsageTap(format, contentType, (tokens) => seen.push(tokens)), seen };
}

test('a stream is read event by event, events split across chunks included, as it passes', () => {
  const { tap: reader, seen } = tap('anthropic', 'text/event-stream; charset=utf-8');
  const stream =
    'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":1000,"output_tokens":1}}}\n\n' +
    'event: content_block_delta\ndata: {"type":"content_block_delta","delta":{"text":"hi"}}\n\n' +
    'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":250}}\n\n';
  const cut = stream.indexOf('message_delta') + 5;
  reader.push(Buffer.from(stream.slice(0, cut)));
  assert.deepEqual(seen, [{ input: 1000, output: 1 }], 'the input is charged before the stream ends');
  reader.push(Buffer.from(stream.slice(cut)));
  reader.end();
  assert.deepEqual(seen.at(-1), { input: 1000, output: 250 });
  assert.ok(reader.found);
});

test('a JSON answer is read when complete; a Gemini JSON array stream by its last usage; none found says so', () => {
  const json = tap('openai-chat', 'application/json');
  const body = JSON.stringify({ choices: [], usage: { prompt_tokens: 12, completion_tokens: 34 } });
  json.tap.push(Buffer.from(body.slice(0, 10)));
  assert.deepEqual(json.seen, []);
  json.tap.push(Buffer.from(body.slice(10)));
  json.tap.end();
  assert.deepEqual(json.seen, [{ input: 12, output: 34 }]);

  const array = tap('gemini', 'application/json');
  array.tap.push(
    Buffer.from(
      JSON.stringify([
        { usageMetadata: { promptTokenCount: 5 } },
        { usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 9 } },
      ]),
    ),
  );
  array.tap.end();
  assert.deepEqual(array.seen.at(-1), { input: 5, output: 9 });

  const nothing = tap('openai-responses', 'text/event-stream');
  nothing.tap.push(Buffer.from('data: {"type":"response.output_text.delta","delta":"x"}\n\ndata: [DONE]\n\n'));
  nothing.tap.end();
  assert.equal(nothing.tap.found, false);
});
