/**
 * The CLIs' stream translators over streams captured from the real CLIs by cli-harnesses.test.ts (its scripts:
 * a text answer, a shell command, a file edit, a failing command, a final answer; and a model error), with the
 * workspace path replaced by /workspace. Then hostile input: whatever a line holds, translate never throws and
 * writes only valid protocol events.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { AGENT_CLIS } from '../../src/execution/harnesses/cli/index.js';
import { type HarnessEvent, parseEvent } from '../../src/runs/index.js';

const FIXTURES = path.join(import.meta.dirname, 'fixtures');

function translateFixture(name: keyof typeof AGENT_CLIS, file: string): HarnessEvent[] {
  const lines = fs
    .readFileSync(path.join(FIXTURES, file), 'utf8')
    .split('\n')
    .filter((line) => line !== '');
  return lines.flatMap((line) => AGENT_CLIS[name].translate(line));
}

const EDITED =
  'The file /workspace/hello.txt has been updated successfully. (file state is current in your context — no need to Read it back)';
const GEMINI_CAT = 'run_shell_command__run_shell_command_1795380706869_0';
const GEMINI_REPLACE = 'replace__replace_1795380707198_0';
const GEMINI_EXIT = 'run_shell_command__run_shell_command_1795380707282_0';

const cases: Array<{ cli: keyof typeof AGENT_CLIS; file: string; events: HarnessEvent[] }> = [
  {
    cli: 'claude',
    file: 'claude.jsonl',
    events: [
      { type: 'text', text: 'Let me look at the file.' },
      {
        type: 'tool_call',
        id: 'toolu_0_0',
        name: 'Bash',
        category: 'command',
        input: { command: 'cat hello.txt', description: 'Show hello.txt' },
      },
      { type: 'tool_result', id: 'toolu_0_0', status: 'completed', output: 'hello' },
      {
        type: 'tool_call',
        id: 'toolu_1_0',
        name: 'Read',
        category: 'files',
        input: { file_path: '/workspace/hello.txt' },
      },
      { type: 'tool_result', id: 'toolu_1_0', status: 'completed', output: '1\thello\n2\t' },
      {
        type: 'tool_call',
        id: 'toolu_2_0',
        name: 'Edit',
        category: 'files',
        input: {
          replace_all: false,
          file_path: '/workspace/hello.txt',
          old_string: 'hello',
          new_string: 'hello world',
        },
      },
      { type: 'tool_result', id: 'toolu_2_0', status: 'completed', output: EDITED },
      {
        type: 'tool_call',
        id: 'toolu_3_0',
        name: 'Bash',
        category: 'command',
        input: { command: 'exit 3', description: 'Fail' },
      },
      { type: 'tool_result', id: 'toolu_3_0', status: 'failed', output: 'Exit code 3' },
      { type: 'text', text: 'I changed hello.txt to greet the world.' },
      // The scripted turns' tokens summed (100+110+120+125+130 in, 20+10+30+5+8 out); the cost is Claude Code's own.
      { type: 'usage', input_tokens: 585, output_tokens: 73, inference_cost: 0.00475 },
      { type: 'done', summary: 'I changed hello.txt to greet the world.' },
    ],
  },
  {
    cli: 'claude',
    file: 'claude-error.jsonl',
    events: [
      { type: 'usage', input_tokens: 0, output_tokens: 0, inference_cost: 0 },
      { type: 'failed', message: 'API Error: 400 the scripted model server has no turn left for request 2' },
    ],
  },
  {
    cli: 'codex',
    file: 'codex.jsonl',
    events: [
      {
        type: 'progress',
        message:
          'Model metadata for `codex-test-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.',
      },
      { type: 'text', text: 'Let me look at the file.' },
      {
        type: 'tool_call',
        id: 'item_2',
        name: 'shell',
        category: 'command',
        input: { command: "/bin/bash -lc 'cat hello.txt'" },
      },
      { type: 'tool_result', id: 'item_2', status: 'completed', output: 'hello\n' },
      // apply_patch run through the shell is intercepted by codex and reported as a file change.
      {
        type: 'tool_call',
        id: 'item_3',
        name: 'apply_patch',
        category: 'files',
        input: { changes: [{ path: '/workspace/hello.txt', kind: 'update' }] },
      },
      {
        type: 'tool_result',
        id: 'item_3',
        status: 'completed',
        output: [{ path: '/workspace/hello.txt', kind: 'update' }],
      },
      {
        type: 'tool_call',
        id: 'item_4',
        name: 'shell',
        category: 'command',
        input: { command: "/bin/bash -lc 'exit 3'" },
      },
      { type: 'tool_result', id: 'item_4', status: 'failed', output: '' },
      { type: 'text', text: 'I changed hello.txt to greet the world.' },
      { type: 'usage', input_tokens: 475, output_tokens: 63 },
      { type: 'done' },
    ],
  },
  {
    cli: 'codex',
    file: 'codex-error.jsonl',
    events: [
      {
        type: 'progress',
        message:
          'Model metadata for `codex-test-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.',
      },
      { type: 'progress', message: 'the scripted model server has no turn left for request 1' },
      { type: 'failed', message: 'the scripted model server has no turn left for request 1' },
    ],
  },
  {
    cli: 'gemini',
    file: 'gemini.jsonl',
    events: [
      // Text arrives in deltas, marked so: the conversation joins them into one text.
      { type: 'text', text: 'Let me l', delta: true },
      { type: 'text', text: 'ook at t', delta: true },
      { type: 'text', text: 'he file.', delta: true },
      {
        type: 'tool_call',
        id: GEMINI_CAT,
        name: 'run_shell_command',
        category: 'command',
        input: { command: 'cat hello.txt', description: 'Show hello.txt' },
      },
      { type: 'tool_result', id: GEMINI_CAT, status: 'completed', output: 'hello' },
      {
        type: 'tool_call',
        id: GEMINI_REPLACE,
        name: 'replace',
        category: 'files',
        input: {
          file_path: '/workspace/hello.txt',
          instruction: 'Greet the world',
          old_string: 'hello',
          new_string: 'hello world',
        },
      },
      { type: 'tool_result', id: GEMINI_REPLACE, status: 'completed', output: '' },
      {
        type: 'tool_call',
        id: GEMINI_EXIT,
        name: 'run_shell_command',
        category: 'command',
        input: { command: 'exit 3' },
      },
      // Gemini CLI reports a command's non-zero exit as a successful tool call.
      { type: 'tool_result', id: GEMINI_EXIT, status: 'completed', output: 'Command exited with code: 3' },
      ...['I change', 'd hello.', 'txt to g', 'reet the', ' world.'].map((text) => ({
        type: 'text' as const,
        text,
        delta: true,
      })),
      { type: 'usage', input_tokens: 475, output_tokens: 63 },
      { type: 'done' },
    ],
  },
  {
    cli: 'gemini',
    file: 'gemini-error.jsonl',
    events: [
      { type: 'usage', input_tokens: 0, output_tokens: 0 },
      { type: 'failed', message: 'the scripted model server has no turn left for request 1' },
    ],
  },
];

describe('CLI stream translators', () => {
  // The exact sequences also pin usage to one event per run, from the final line's totals.
  for (const { cli, file, events } of cases) {
    test(`${cli}: ${file}`, () => {
      const translated = translateFixture(cli, file);
      assert.deepEqual(translated, events);
      for (const event of translated)
        assert.deepEqual(parseEvent(JSON.stringify(event)), event, `a valid protocol event: ${JSON.stringify(event)}`);
    });
  }

  test('a subagent’s own steps are left out (its answer is the Task call’s result)', () => {
    const line = JSON.stringify({
      type: 'assistant',
      parent_tool_use_id: 'toolu_task',
      message: {
        content: [
          { type: 'text', text: 'sub' },
          { type: 'tool_use', id: 'toolu_sub', name: 'Bash', input: {} },
        ],
      },
    });
    assert.deepEqual(AGENT_CLIS.claude.translate(line), []);
  });

  test('malformed and unknown lines translate to nothing', () => {
    const lines = [
      '',
      'not json',
      '{"type":',
      '[1,2]',
      'null',
      '{}',
      '{"type":"unknown"}',
      '{"type":"assistant"}',
      '{"type":"assistant","message":{"content":[{"type":"tool_use"}]}}',
      '{"type":"result"}',
      '{"type":"item.completed","item":{"type":"command_execution"}}',
      '{"type":"tool_use","tool_id":"","tool_name":"x"}',
      '{"type":"message","role":"assistant","content":7}',
      '  {"type":"done"}',
    ];
    for (const cli of Object.values(AGENT_CLIS)) {
      for (const line of lines) assert.deepEqual(cli.translate(line), [], `${cli.name}: ${line}`);
    }
  });

  test('hostile lines never throw and give only valid protocol events', () => {
    const types = [
      'assistant',
      'user',
      'result',
      'system',
      'item.started',
      'item.completed',
      'turn.completed',
      'turn.failed',
      'error',
      'message',
      'tool_use',
      'tool_result',
    ];
    const itemTypes = [
      'agent_message',
      'command_execution',
      'file_change',
      'mcp_tool_call',
      'web_search',
      'error',
      'reasoning',
    ];
    const value = fc.jsonValue({ maxDepth: 3 });
    const item = fc
      .record({ id: fc.oneof(fc.string(), value), type: fc.constantFrom(...itemTypes) })
      .chain((base) => fc.dictionary(fc.string(), value).map((rest) => ({ ...rest, ...base })));
    const line = fc.oneof(
      fc.string(),
      value.map((json) => JSON.stringify(json)),
      fc
        .record(
          {
            type: fc.constantFrom(...types),
            item: fc.oneof(item, value),
            message: fc.oneof(fc.record({ content: fc.oneof(fc.string(), fc.array(fc.oneof(item, value))) }), value),
            usage: value,
            stats: value,
            status: fc.oneof(fc.constantFrom('success', 'error'), value),
          },
          { requiredKeys: ['type'] },
        )
        .map((json) => JSON.stringify(json)),
    );
    fc.assert(
      fc.property(line, (text) => {
        for (const cli of Object.values(AGENT_CLIS)) {
          for (const event of cli.translate(text))
            assert.ok(parseEvent(JSON.stringify(event)), `${cli.name}: ${JSON.stringify(event)} from ${text}`);
        }
      }),
      { numRuns: 500 },
    );
  });
});
