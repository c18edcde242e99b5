import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BASE_IMAGE, testEngines } from '../support/container-engines.js';
import { type EgressHosts, egressHostsAvailable, startEgressHosts } from '../support/egress-hosts.js';
import { getRun, harnessEnv, outputTexts, script, waitForState } from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

// The container sandbox behind the egress proxy, on each engine: one container for the whole execution, setup
// allowed one host and the agent another, each phase held to its own list (issue 51). The image has no curl; Hangar's
// own node (bound into every container) is the client, asking the proxy the way curl does (CONNECT, then TLS with
// the name), and a DNS lookup that ignores the proxy shows what a tool that does not honour it gets.
const { engines, skipReason } = testEngines();
const skip = skipReason || (!egressHostsAvailable() ? 'needs root, ip netns and openssl' : false);

const CLIENT = String.raw`
const http = require('node:http'), tls = require('node:tls'), dns = require('node:dns'), net = require('node:net');
const [mode, host, address] = process.argv.slice(2);
const say = (text) => console.log(text);
if (mode === 'dns') dns.lookup(host, (error, found) => say(error ? host + ' unresolved: ' + error.code : host + ' is ' + found));
else if (mode === 'direct') {
  const socket = net.connect({ host: address, port: 443, timeout: 5000 });
  socket.on('connect', () => { say(host + ' reached directly'); socket.destroy(); });
  socket.on('timeout', () => { say(host + ' direct failed: timeout'); socket.destroy(); });
  socket.on('error', (error) => say(host + ' direct failed: ' + error.code));
} else {
  const proxy = new URL(process.env.HTTPS_PROXY || 'http://none.invalid:1');
  const request = http.request({
    host: proxy.hostname, port: proxy.port, method: 'CONNECT', path: host + ':443', headers: { host: host + ':443' },
  });
  request.on('connect', (response, socket) => {
    if (response.statusCode !== 200) { say(host + ' failed with ' + response.statusCode); return socket.destroy(); }
    const secure = tls.connect({ socket, servername: host, rejectUnauthorized: false }, () =>
      secure.write('GET / HTTP/1.0\r\nHost: ' + host + '\r\n\r\n'));
    let body = '';
    secure.on('data', (chunk) => (body += chunk));
    secure.on('end', () => say(body.split('\r\n\r\n').slice(1).join('').trim()));
    secure.on('error', (error) => say(host + ' failed: ' + error.message));
  });
  request.on('error', (error) => say(host + ' failed: ' + error.code));
  request.end();
}
`;

/** Shell that writes the client into the workspace once, then asks it `args` (one line of output each). */
const ask = (...calls: string[][]) =>
  [
    `[ -f .egress-client.cjs ] || cat > .egress-client.cjs <<'JS'\n${CLIENT}\nJS`,
    ...calls.map((args) => `/opt/hangar/bin/node .egress-client.cjs ${args.join(' ')}`),
  ].join('\n');

for (const engine of engines) {
  describe(`a container's network by allow list, on ${engine.name}`, { skip, timeout: 240_000 }, () => {
    let hosts: EgressHosts;
    let hangar: TestServer;
    before(async () => {
      hosts = await startEgressHosts(['allowed.test', 'other.test']);
      hangar = await startTestServer(
        harnessEnv(
          {
            networked: {
              command: [process.execPath, new URL('../support/script-harness.mjs', import.meta.url).pathname],
              network: true,
            },
          },
          {
            HANGAR_SANDBOX: 'container',
            DOCKER_HOST: engine.dockerHost,
            HANGAR_DEFAULT_IMAGE: BASE_IMAGE,
            HANGAR_EGRESS_HOSTS: `allowed.test=${hosts.addresses.allowed},other.test=${hosts.addresses.other}`,
            HANGAR_EGRESS_ALLOWED_ADDRESSES: hosts.range,
          },
        ),
      );
    });
    after(async () => {
      await hangar?.stop();
      hosts?.stop();
    });

    test('setup and agent each reach their own host through the proxy; the rest, DNS and direct, are refused', async () => {
      const created = await hangar.request('POST', '/api/v1/environments', {
        body: {
          name: `allow lists on ${engine.name}`,
          setup_commands: [ask(['proxy', 'allowed.test'], ['proxy', 'other.test'])],
          network: { setup: { allow: ['allowed.test'] }, agent: { allow: ['other.test'] } },
        },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const runId = await createRun(hangar, {
        prompt: script(
          {
            sh: ask(
              ['proxy', 'other.test'],
              ['proxy', 'allowed.test'],
              ['dns', 'pastebin.test'],
              ['dns', 'other.test'],
              ['direct', 'other.test', hosts.addresses.other],
            ),
          },
          { done: 'ok' },
        ),
        config: { environment_id: created.body.uid, harness: { type: 'networked' } },
      });
      const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
      const timeline = (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events as Array<{
        event_type: string;
        payload: Record<string, unknown>;
      }>;
      const setupOutput = String(
        timeline.find((event) => event.event_type === 'environment_setup_command')?.payload.output_tail,
      );
      assert.match(setupOutput, /hello from allowed\.test over https/);
      assert.match(setupOutput, /other\.test failed with 403/);
      const said = (await outputTexts(hangar, runId)).join('\n');
      assert.match(said, /hello from other\.test over https/, said);
      assert.match(said, /allowed\.test failed with 403/, said);
      assert.match(said, /pastebin\.test unresolved/, said);
      assert.match(said, new RegExp(`other\\.test is ${hosts.addresses.other.replaceAll('.', '\\.')}`), said);
      assert.match(said, /other\.test direct failed/, said);
      assert.doesNotMatch(said, /reached directly/, said);

      const answered = await getRun(hangar, runId);
      const account = answered.network_refusals.map(({ phase, host, port, reason }: Record<string, unknown>) =>
        [phase, host, port ?? 'dns', reason].join(' '),
      );
      assert.deepEqual(account.sort(), [
        'agent allowed.test 443 not_allowed',
        'agent pastebin.test dns not_allowed',
        'setup other.test 443 not_allowed',
      ]);
    });
  });
}
