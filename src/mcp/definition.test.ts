import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../platform/http/errors.js';
import { definitionFrom, secretNames, withSecretValues } from './definition.js';
import type { McpServerBody } from './schemas.js';

function problem(body: Omit<McpServerBody, 'name'>): string {
  try {
    definitionFrom({ name: 'x', ...body });
  } catch (error) {
    assert.ok(error instanceof ApiError && error.status === 400);
    return error.detail;
  }
  assert.fail(`accepted ${JSON.stringify(body)}`);
}

test('a stdio definition keeps command, args and env, with defaults', () => {
  assert.deepEqual(definitionFrom({ name: 'gh', command: ' npx ' }), { command: 'npx', args: [], env: {} });
  assert.deepEqual(
    definitionFrom({
      name: 'gh',
      command: 'npx',
      args: ['-y', 'server'],
      env: { TOKEN: { secret: 'GH' }, MODE: 'ro' },
    }),
    {
      command: 'npx',
      args: ['-y', 'server'],
      env: { TOKEN: { secret: 'GH' }, MODE: 'ro' },
    },
  );
});

test('an HTTP definition keeps url and headers', () => {
  assert.deepEqual(
    definitionFrom({
      name: 'linear',
      url: 'https://mcp.example.com/sse',
      headers: { Authorization: { secret: 'LINEAR' } },
    }),
    {
      url: 'https://mcp.example.com/sse',
      headers: { Authorization: { secret: 'LINEAR' } },
    },
  );
});

test('exactly one of command or url, each with its own fields', () => {
  assert.match(problem({}), /exactly one of command/);
  assert.match(problem({ command: 'x', url: 'https://a' }), /exactly one of command/);
  assert.match(problem({ command: 'x', headers: {} }), /headers go with url/);
  assert.match(problem({ url: 'https://a', env: {} }), /args and env go with command/);
  assert.match(problem({ url: 'https://a', args: [] }), /args and env go with command/);
  assert.match(problem({ command: '   ' }), /command must not be blank/);
  assert.match(problem({ url: 'not a url' }), /not a valid URL/);
  assert.match(problem({ url: 'ftp://example.com' }), /http or https/);
});

test('names and values that cannot be passed on are refused', () => {
  assert.match(problem({ command: 'x', env: { '1ABC': 'v' } }), /environment variable name/);
  assert.match(problem({ command: 'x', env: { 'A-B': 'v' } }), /environment variable name/);
  assert.match(problem({ command: 'x', env: { A: 'a\0b' } }), /env\.A/);
  assert.match(problem({ url: 'https://a', headers: { 'Bad Header': 'v' } }), /header name/);
  assert.match(problem({ url: 'https://a', headers: { 'X-A': 'v\r\nX-Injected: 1' } }), /headers\.X-A/);
});

test('secret names are listed once, and filled in only when resolving', () => {
  const definition = definitionFrom({
    name: 'x',
    command: 'run',
    env: { A: { secret: 'S2' }, B: { secret: 'S1' }, C: { secret: 'S2' }, D: 'plain' },
  });
  assert.deepEqual(secretNames(definition), ['S1', 'S2']);
  assert.deepEqual(
    withSecretValues(
      definition,
      new Map([
        ['S1', 'one'],
        ['S2', 'two'],
      ]),
    ),
    {
      command: 'run',
      args: [],
      env: { A: 'two', B: 'one', C: 'two', D: 'plain' },
    },
  );
  assert.throws(() => withSecretValues(definition, new Map([['S1', 'one']])), /S2/);
  const http = definitionFrom({ name: 'y', url: 'https://a', headers: { Authorization: { secret: 'TOKEN' } } });
  assert.deepEqual(withSecretValues(http, new Map([['TOKEN', 'Bearer t']])), {
    url: 'https://a',
    headers: { Authorization: 'Bearer t' },
  });
});
