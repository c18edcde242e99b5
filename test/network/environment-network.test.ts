import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => (hangar = await startTestServer({}, { role: 'api' })));
after(() => hangar.stop());

async function create(body: Record<string, unknown>) {
  const response = await hangar.request('POST', '/api/v1/environments', { body });
  assert.equal(response.status, 201, JSON.stringify(response.body));
  return response.body;
}

describe("an environment's network", () => {
  test('create, get and update keep each phase in one shape', async () => {
    const item = await create({
      name: 'npm only',
      network: {
        setup: { presets: ['npm'], allow: ['Mirror.Example.org:8443'] },
        agent: { allow: [{ host: '*.githubusercontent.com' }, { host: 'api.example.org', methods: ['get', 'HEAD'] }] },
      },
    });
    const expected = {
      setup: { allow: [{ host: 'mirror.example.org', ports: [8443] }], presets: ['npm'] },
      agent: {
        allow: [
          { host: '*.githubusercontent.com', ports: [80, 443] },
          { host: 'api.example.org', ports: [80, 443], methods: ['GET', 'HEAD'] },
        ],
      },
    };
    assert.deepEqual(item.config.network, expected);
    const fetched = await hangar.request('GET', `/api/v1/environments/${item.uid}`);
    assert.deepEqual(fetched.body.config.network, expected);
    // What GET answers can be sent back as it is.
    const replaced = await hangar.request('PUT', `/api/v1/environments/${item.uid}`, { body: fetched.body.config });
    assert.equal(replaced.status, 200, JSON.stringify(replaced.body));
    assert.deepEqual(replaced.body.config.network, expected);
    const listed = await hangar.request('GET', '/agent/environments');
    assert.deepEqual(
      listed.body.environments.find((entry: { uid: string }) => entry.uid === item.uid).config.network,
      expected,
    );
  });

  test('network: true is open, false is off; a phase left out is not stored', async () => {
    assert.deepEqual((await create({ name: 'open', network: true })).config.network, { setup: 'open', agent: 'open' });
    assert.deepEqual((await create({ name: 'closed', network: false })).config.network, { setup: 'off', agent: 'off' });
    assert.deepEqual((await create({ name: 'agent off', network: { agent: 'off' } })).config.network, { agent: 'off' });
    assert.equal((await create({ name: 'none' })).config.network, undefined);
  });

  test('bad networks are 400 invalid_request naming the entry', async () => {
    const cases: Array<[unknown, RegExp]> = [
      ['on', /network/],
      [{ agent: 'closed' }, /network/],
      [{ agent: { allow: ['a.*.example.com'] } }, /network\.agent\.allow\[0\].*wildcard only as its first label/],
      [{ setup: { allow: ['10.0.0.1'] } }, /network\.setup\.allow\[0\].*is an address/],
      [{ agent: { allow: ['bad_host.com'] } }, /not a host name/],
      [{ agent: { allow: [{ host: 'x.com', ports: [0] }] } }, /ports/],
      [{ agent: { allow: [{ host: 'x.com', methods: ['BREW'] }] } }, /method "BREW"/],
      [{ agent: { presets: ['cpan'] } }, /presets/],
      [{ agent: {} }, /lists no host and no preset/],
      [{ agent: 'open', other: 'open' }, /other/],
    ];
    for (const [network, reason] of cases) {
      const response = await hangar.request('POST', '/api/v1/environments', { body: { name: 'x', network } });
      assert.equal(response.status, 400, JSON.stringify(network));
      assert.equal(response.body.error_code, 'invalid_request');
      assert.match(response.body.detail, reason, `${JSON.stringify(network)}: ${response.body.detail}`);
    }
  });

  test('hangar environments create takes the network options', async () => {
    const result = await hangarCli(
      [
        'environments',
        'create',
        '--name',
        'cli net',
        '--setup-preset',
        'pypi',
        '--agent-allow',
        'api.example.org',
        '--agent-allow',
        '*.example.net:8443',
        '--json',
      ],
      { url: hangar.url, apiKey: hangar.apiKey },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout).config.network, {
      setup: { allow: [], presets: ['pypi'] },
      agent: {
        allow: [
          { host: 'api.example.org', ports: [80, 443] },
          { host: '*.example.net', ports: [8443] },
        ],
      },
    });
    const listed = await hangarCli(['environments', 'list'], { url: hangar.url, apiKey: hangar.apiKey });
    assert.match(listed.stdout, /@pypi/);
    const off = await hangarCli(['environments', 'create', '--name', 'quiet', '--network', 'off', '--json'], {
      url: hangar.url,
      apiKey: hangar.apiKey,
    });
    assert.deepEqual(JSON.parse(off.stdout).config.network, { setup: 'off', agent: 'off' });
  });
});
