import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => {
  hangar = await startTestServer({}, { role: 'api' });
  const secret = await hangar.request('POST', '/api/v1/secrets', {
    body: { name: 'TOKEN', value: 'cli-secret-value' },
  });
  assert.equal(secret.status, 201);
});
after(() => hangar.stop());

const cli = (args: string[], apiKey = hangar.apiKey) =>
  hangarCli(['mcp-servers', ...args], { url: hangar.url, apiKey });

async function ok(args: string[], apiKey?: string): Promise<string> {
  const result = await cli(args, apiKey);
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

describe('hangar mcp-servers', () => {
  test('create (stdio and HTTP), get, list, share, unshare, delete', async () => {
    const stdio = JSON.parse(
      await ok([
        'create',
        '--json',
        '--name',
        'github',
        '--command',
        'npx',
        '--arg',
        '-y',
        '--arg',
        'server-github',
        '--env',
        'MODE=ro',
        '--secret-env',
        'GITHUB_TOKEN=TOKEN',
      ]),
    );
    assert.match(stdio.uid, /^[A-Za-z0-9]{22}$/);
    assert.deepEqual(
      [stdio.command, stdio.args, stdio.env],
      ['npx', ['-y', 'server-github'], { MODE: 'ro', GITHUB_TOKEN: { secret: 'TOKEN' } }],
    );
    const http = JSON.parse(
      await ok([
        'create',
        '--json',
        '--name',
        'linear',
        '--url',
        'https://mcp.example.com/mcp',
        '--header',
        'X-A=b=c',
        '--secret-header',
        'Authorization=TOKEN',
      ]),
    );
    assert.deepEqual(http.headers, { 'X-A': 'b=c', Authorization: { secret: 'TOKEN' } });

    assert.deepEqual(JSON.parse(await ok(['get', stdio.uid, '--json'])), stdio);
    const list = await ok(['list']);
    assert.match(list, new RegExp(`^${http.uid}\\s+linear\\s+https://mcp.example.com/mcp\\s+this team$`, 'm'));
    assert.match(list, new RegExp(`^${stdio.uid}\\s+github\\s+npx\\s+this team$`, 'm'));
    assert.deepEqual(
      JSON.parse(await ok(['list', '--json'])).mcp_servers.map((item: { name: string }) => item.name),
      ['github', 'linear'],
    );
    assert.equal((list + JSON.stringify(stdio) + JSON.stringify(http)).includes('cli-secret-value'), false);

    const other = await hangar.createTeamWithUser();
    assert.deepEqual(JSON.parse(await ok(['share', stdio.uid, other.teamUid, '--json'])).shared_with, [other.teamUid]);
    assert.match(
      await ok(['list'], other.apiKey),
      new RegExp(`^${stdio.uid}\\s+github\\s+npx\\s+team ${hangar.teamUid}$`, 'm'),
    );
    assert.match(await ok(['unshare', stdio.uid, other.teamUid]), /no longer shared/);
    assert.match(await ok(['list'], other.apiKey), /^No MCP servers\./);

    assert.match(await ok(['delete', stdio.uid]), new RegExp(`Deleted MCP server ${stdio.uid}`));
    const gone = await cli(['get', stdio.uid]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /HTTP 404/);
  });

  test('the server explains a create that is neither or both kinds, and malformed pairs are refused', async () => {
    const both = await cli(['create', '--name', 'x', '--command', 'a', '--url', 'https://b']);
    assert.equal(both.code, 1);
    assert.match(both.stderr, /HTTP 400.*exactly one of command/);
    const mixed = await cli(['create', '--name', 'x', '--url', 'https://b', '--env', 'A=b']);
    assert.equal(mixed.code, 1);
    assert.match(mixed.stderr, /args and env go with command/);
    const pair = await cli(['create', '--name', 'x', '--command', 'a', '--env', 'novalue']);
    assert.equal(pair.code, 1);
    assert.match(pair.stderr, /--env takes KEY=VALUE/);
    const missingSecret = await cli(['create', '--name', 'x', '--command', 'a', '--secret-env', 'A=NOPE']);
    assert.equal(missingSecret.code, 1);
    assert.match(missingSecret.stderr, /NOPE/);
  });
});
