import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import { EventEmitter, once } from 'node:events';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { EgressProxy, type Refusal } from '../../src/network/index.js';
import { type EgressHosts, egressHostsAvailable, startEgressHosts } from '../support/egress-hosts.js';

// Real traffic through the proxy process to the test's own hosts, in a network namespace this file makes.
const skip = egressHostsAvailable() ? false : 'needs root, ip netns and openssl';

let hosts: EgressHosts;
let proxy: EgressProxy;
const refusals: Refusal[] = [];
/** Tells of each refusal pushed on `refusals`. */
const reported = new EventEmitter();

before(async () => {
  if (skip) return;
  hosts = await startEgressHosts(['allowed.test', 'other.test', 'private.test', 'forged.test']);
  proxy = new EgressProxy({
    maxConnections: 4,
    byteBudget: 64 * 1024 * 1024,
    allowedAddresses: hosts.range,
    hosts: {
      'allowed.test': [hosts.addresses.allowed],
      'other.test': [hosts.addresses.other],
      'private.test': [hosts.addresses.private],
      'forged.test': [hosts.addresses.other],
    },
  });
  proxy.onRefusal((refusal) => {
    refusals.push(refusal);
    reported.emit('refusal');
  });
});
after(async () => {
  await proxy?.stop();
  hosts?.stop();
});

const rules = [
  { host: 'allowed.test', ports: [80, 443] },
  { host: 'private.test', ports: [80, 443] },
  { host: 'forged.test', ports: [443] },
];

async function curl(proxyPort: number, url: string) {
  try {
    const { stdout } = await promisify(execFile)('curl', [
      '-sS',
      '--max-time',
      '20',
      '--noproxy',
      '',
      '-x',
      `http://127.0.0.1:${proxyPort}`,
      '--cacert',
      hosts.caFile,
      url,
    ]);
    return { ok: true, out: stdout };
  } catch (error) {
    const { stdout, stderr } = error as { stdout: string; stderr: string };
    return { ok: false, out: `${stdout}${stderr}` };
  }
}

/** Waits until a refusal matching `where` has been reported. */
async function refused(where: Partial<Refusal>): Promise<Refusal> {
  for (;;) {
    const found = refusals.find((refusal) =>
      Object.entries(where).every(([key, value]) => refusal[key as keyof Refusal] === value),
    );
    if (found) return found;
    await once(reported, 'refusal');
  }
}

describe('the egress proxy', { skip }, () => {
  test('an allowed name answers over HTTPS (tunnelled, unopened) and HTTP', async () => {
    const lease = await proxy.open({ run: 'run-a', phase: 'agent', rules, bind: '127.0.0.1' });
    try {
      assert.deepEqual(await curl(lease.proxyPort, 'https://allowed.test/'), {
        ok: true,
        out: 'hello from allowed.test over https\n',
      });
      assert.deepEqual(await curl(lease.proxyPort, 'http://allowed.test/'), {
        ok: true,
        out: 'hello from allowed.test over http\n',
      });
    } finally {
      lease.close();
    }
  });

  test('a host off the list is refused with the line that allows it, and reported', async () => {
    const lease = await proxy.open({ run: 'run-b', phase: 'agent', rules, bind: '127.0.0.1' });
    try {
      const https = await curl(lease.proxyPort, 'https://other.test/');
      assert.equal(https.ok, false);
      assert.match(https.out, /CONNECT tunnel failed, response 403/);
      const http = await curl(lease.proxyPort, 'http://other.test:8080/x');
      assert.match(http.out, /other\.test:8080 refused for this run's agent: not on the agent allow list/);
      assert.match(http.out, /add "other\.test:8080" to network\.agent\.allow/);
      const refusal = await refused({ run: 'run-b', host: 'other.test', port: 443 });
      assert.equal(refusal.reason, 'not_allowed');
      assert.equal(refusal.phase, 'agent');
    } finally {
      lease.close();
    }
  });

  test('a name that resolves to a private address is refused', async () => {
    const lease = await proxy.open({ run: 'run-c', phase: 'setup', rules, bind: '127.0.0.1' });
    try {
      const result = await curl(lease.proxyPort, 'https://private.test/');
      assert.equal(result.ok, false);
      const refusal = await refused({ run: 'run-c', host: 'private.test' });
      assert.equal(refusal.reason, 'private_address');
      assert.equal(refusal.phase, 'setup');
    } finally {
      lease.close();
    }
  });

  test('a ClientHello whose server name disagrees with CONNECT is refused before anything goes upstream', async () => {
    const lease = await proxy.open({ run: 'run-d', phase: 'agent', rules, bind: '127.0.0.1' });
    try {
      const socket = net.connect(lease.proxyPort, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write('CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n');
      const established = await new Promise<string>((resolve) =>
        socket.once('data', (chunk) => resolve(String(chunk))),
      );
      assert.match(established, /^HTTP\/1\.1 200/);
      const secure = tls.connect({ socket, servername: 'other.test', ca: [] });
      const outcome = await new Promise<string>((resolve) => {
        secure.once('secureConnect', () => resolve('connected'));
        secure.once('error', () => resolve('refused'));
        secure.once('close', () => resolve('refused'));
      });
      assert.equal(outcome, 'refused');
      const refusal = await refused({ run: 'run-d', host: 'other.test' });
      assert.equal(refusal.reason, 'name_mismatch');
      // A Host header that disagrees with the CONNECT line is refused as well.
      const second = net.connect(lease.proxyPort, '127.0.0.1');
      second.write('CONNECT allowed.test:443 HTTP/1.1\r\nHost: other.test\r\n\r\n');
      const answer = await new Promise<string>((resolve) => second.once('data', (chunk) => resolve(String(chunk))));
      assert.match(answer, /^HTTP\/1\.1 403/);
      second.destroy();
    } finally {
      lease.close();
    }
  });

  test('the resolver answers allowed names only, with reachable addresses only', async () => {
    const lease = await proxy.open({ run: 'run-e', phase: 'agent', rules, bind: '127.0.0.1' });
    try {
      const resolver = new Resolver({ timeout: 5000, tries: 1 });
      resolver.setServers([`127.0.0.1:${lease.dnsPort}`]);
      assert.deepEqual(await resolver.resolve4('allowed.test'), [hosts.addresses.allowed]);
      await assert.rejects(resolver.resolve4('other.test'), { code: 'ENOTFOUND' });
      await assert.rejects(resolver.resolve4('private.test'), { code: 'ENOTFOUND' });
      await refused({ run: 'run-e', host: 'other.test', reason: 'not_allowed' });
      await refused({ run: 'run-e', host: 'private.test', reason: 'private_address' });
    } finally {
      lease.close();
    }
  });

  test('setup and agent keep their own lists', async () => {
    const setup = await proxy.open({
      run: 'run-f',
      phase: 'setup',
      rules: [{ host: 'other.test', ports: [443] }],
      bind: '127.0.0.1',
    });
    const agent = await proxy.open({ run: 'run-f', phase: 'agent', rules, bind: '127.0.0.1' });
    try {
      assert.equal((await curl(setup.proxyPort, 'https://other.test/')).ok, true);
      assert.equal((await curl(setup.proxyPort, 'https://allowed.test/')).ok, false);
      assert.equal((await curl(agent.proxyPort, 'https://allowed.test/')).ok, true);
      assert.equal((await curl(agent.proxyPort, 'https://other.test/')).ok, false);
      assert.equal((await refused({ run: 'run-f', host: 'allowed.test' })).phase, 'setup');
      assert.equal((await refused({ run: 'run-f', host: 'other.test' })).phase, 'agent');
    } finally {
      setup.close();
      agent.close();
    }
  });

  test('a run over its connection limit is refused', async () => {
    const lease = await proxy.open({ run: 'run-g', phase: 'agent', rules, bind: '127.0.0.1' });
    const held: net.Socket[] = [];
    try {
      for (let index = 0; index < 4; index += 1) {
        const socket = net.connect(lease.proxyPort, '127.0.0.1');
        socket.write('CONNECT allowed.test:443 HTTP/1.1\r\n\r\n');
        await new Promise((resolve) => socket.once('data', resolve));
        held.push(socket);
      }
      const result = await curl(lease.proxyPort, 'https://allowed.test/');
      assert.equal(result.ok, false);
      assert.equal((await refused({ run: 'run-g', host: 'allowed.test' })).reason, 'connection_limit');
    } finally {
      for (const socket of held) socket.destroy();
      lease.close();
    }
  });
});
