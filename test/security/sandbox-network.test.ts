import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { probeResult, type RootServer, rootServerSkip, startProbeRun, startRootServer } from './root-server.js';

const skip = rootServerSkip();

/** bash's /dev/tcp: "<tag> open" when a TCP connection to host:port succeeds, otherwise "<tag> refused". */
const tryConnect = (tag: string, host: string, port: number | string) =>
  `if timeout 5 bash -c 'exec 3<>/dev/tcp/${host}/${port}' 2>/dev/null; then echo "${tag} open"; else echo "${tag} refused"; fi`;

/** An HTTP GET of Hangar's /healthz through $HANGAR_API_URL: "api <status line>". */
const API_CHECK = [
  'hostport=${HANGAR_API_URL#http://}; hostport=${hostport%%/*}',
  'exec 3<>/dev/tcp/${hostport%:*}/${hostport##*:} || { echo "api unreachable"; exit 0; }',
  `printf 'GET /healthz HTTP/1.0\\r\\nHost: hangar\\r\\n\\r\\n' >&3`,
  'read -r status <&3; echo "api ${status%$(printf "\\r")}"',
].join('; ');

describe("a networked run's network, when the server is root", { skip, timeout: 120_000 }, () => {
  let server: RootServer;
  let listener: net.Server;
  let port: number;
  const connections: string[] = [];
  before(async () => {
    // A service of the host that listens on loopback only, as databases and admin consoles do.
    listener = net.createServer((socket) => {
      connections.push(String(socket.remotePort));
      socket.end();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    port = (listener.address() as net.AddressInfo).port;
    const script = [
      tryConnect('harness-listener', '127.0.0.1', port),
      tryConnect('harness-postgres', '127.0.0.1', 5432),
      API_CHECK,
      'cat setup-report.txt',
    ].join('; ');
    server = await startRootServer({ script, network: true });
  });
  after(async () => {
    await server?.stop();
    listener?.close();
  });

  test("neither setup commands nor the harness reach the host's loopback services; the harness still reaches Hangar's API", async () => {
    const setup = `(${tryConnect('setup-listener', '127.0.0.1', port)}; ${tryConnect('setup-postgres', '127.0.0.1', 5432)}) > setup-report.txt`;
    const runId = await startProbeRun(server, [`bash -c ${JSON.stringify(setup)}`]);
    const { run, lines } = await probeResult(server, runId);
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run));
    assert.deepEqual(lines.sort(), [
      'api HTTP/1.1 200 OK',
      'harness-listener refused',
      'harness-postgres refused',
      'setup-listener refused',
      'setup-postgres refused',
    ]);
    assert.deepEqual(connections, []);
  });
});
