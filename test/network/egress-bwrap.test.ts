import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  resolveSandboxMode,
  type SandboxSpawnOptions,
  scrubbedEnvironment,
  spawnSandboxed,
} from '../../src/execution/sandbox/index.js';
import { type EgressLease, EgressProxy, type Refusal } from '../../src/network/index.js';
import { type EgressHosts, egressHostsAvailable, startEgressHosts } from '../support/egress-hosts.js';

// A bwrap sandbox whose network is an allow list: everything goes through the egress proxy or nowhere.
const skip = !egressHostsAvailable()
  ? 'needs root, ip netns and openssl'
  : resolveSandboxMode('bwrap').mode.kind !== 'bwrap'
    ? 'bwrap does not work here'
    : false;

let hosts: EgressHosts;
let proxy: EgressProxy;
let lease: EgressLease;
let workspace: string;
const refusals: Refusal[] = [];
/** Tells of each refusal pushed on `refusals`. */
const reported = new EventEmitter();

before(async () => {
  if (skip) return;
  hosts = await startEgressHosts(['allowed.test', 'other.test']);
  proxy = new EgressProxy({
    maxConnections: 16,
    byteBudget: 64 * 1024 * 1024,
    allowedAddresses: hosts.range,
    hosts: { 'allowed.test': [hosts.addresses.allowed], 'other.test': [hosts.addresses.other] },
  });
  proxy.onRefusal((refusal) => {
    refusals.push(refusal);
    reported.emit('refusal');
  });
  lease = await proxy.open({
    run: 'bwrap-run',
    phase: 'agent',
    rules: [{ host: 'allowed.test', ports: [80, 443] }],
    bind: '127.0.0.1',
  });
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-egress-bwrap-'));
  fs.chmodSync(workspace, 0o777);
  // bwrap's /tmp is its own: the test authority's certificate goes where the sandbox sees it.
  fs.copyFileSync(hosts.caFile, path.join(workspace, 'ca.pem'));
  fs.chmodSync(path.join(workspace, 'ca.pem'), 0o644);
});
after(async () => {
  lease?.close();
  await proxy?.stop();
  hosts?.stop();
  if (workspace) fs.rmSync(workspace, { recursive: true, force: true });
});

async function inSandbox(argv: string[], options: Partial<SandboxSpawnOptions> = {}) {
  const child = spawnSandboxed({
    mode: resolveSandboxMode('bwrap').mode,
    argv,
    cwd: workspace,
    env: scrubbedEnvironment({}, workspace),
    hiddenPaths: [],
    allowNetwork: true,
    egress: { proxyPort: lease.proxyPort, dnsPort: lease.dnsPort },
    timeoutMs: 60_000,
    maxOutputBytes: 1_000_000,
    keepStdinOpen: false,
    ...options,
  });
  const lines: string[] = [];
  child.onStdoutLine((line) => lines.push(line));
  child.onStderrLine((line) => lines.push(line));
  const exit = await child.exited;
  return { code: exit.code, out: lines.join('\n') };
}

async function refused(where: Partial<Refusal>): Promise<Refusal> {
  for (;;) {
    const found = refusals.find((refusal) =>
      Object.entries(where).every(([key, value]) => refusal[key as keyof Refusal] === value),
    );
    if (found) return found;
    await once(reported, 'refusal');
  }
}

const curl = (...args: string[]) => ['curl', '-sS', '--max-time', '20', '--cacert', 'ca.pem', ...args];

describe('a bwrap sandbox behind the egress proxy', { skip }, () => {
  test('an allowed name answers through the proxy variables', async () => {
    const https = await inSandbox(curl('https://allowed.test/'));
    assert.equal(https.out, 'hello from allowed.test over https', https.out);
    const http = await inSandbox(curl('http://allowed.test/'));
    assert.equal(http.out, 'hello from allowed.test over http', http.out);
  });

  test('a refused name fails with the proxy saying why, and is in the account', async () => {
    const result = await inSandbox(curl('https://other.test/'));
    assert.notEqual(result.code, 0);
    assert.match(result.out, /CONNECT tunnel failed, response 403/);
    const refusal = await refused({ run: 'bwrap-run', host: 'other.test', port: 443 });
    assert.equal(refusal.phase, 'agent');
  });

  test('a direct connection to an allowed address, bypassing the proxy, is dropped', async () => {
    const result = await inSandbox(
      curl('--noproxy', '*', '--resolve', `allowed.test:443:${hosts.addresses.allowed}`, 'https://allowed.test/'),
    );
    assert.notEqual(result.code, 0);
    assert.doesNotMatch(result.out, /hello/);
  });

  test("the sandbox's resolver answers allowed names only; other resolvers get nothing", async () => {
    const lookup = await inSandbox(['getent', 'ahostsv4', 'allowed.test']);
    assert.match(lookup.out, new RegExp(hosts.addresses.allowed.replaceAll('.', '\\.')));
    const other = await inSandbox(['getent', 'ahostsv4', 'other.test']);
    assert.notEqual(other.code, 0);
    await refused({ run: 'bwrap-run', host: 'other.test', reason: 'not_allowed', port: undefined });
    // The test's own resolver at another address answers anyone who reaches it; the sandbox does not.
    const script = `const s = require('dgram').createSocket('udp4');
      s.on('message', () => { console.log('answered'); process.exit(0); });
      s.on('error', (error) => { console.log(error.code); process.exit(1); });
      s.send(Buffer.from('hangar'), 53, '${hosts.addresses.other}');`;
    const direct = await inSandbox([process.execPath, '-e', script]);
    assert.notEqual(direct.code, 0);
    assert.doesNotMatch(direct.out, /answered/);
  });
});
