/**
 * Egress proxy benchmark (issue 51): the cost of the proxy on a download and on a sandbox's start, each beside its
 * baseline in the same run. Download: curl fetches BENCH_EGRESS_MB from the bench's own host (a network namespace it
 * makes, over a veth pair) directly and through the proxy, taking turns; MB/s, median of the rounds (target >= 80%
 * of direct). Start: a networked bwrap sandbox running `true`, with its open network and with an egress lease
 * (opened per sandbox, as a run's phase would); p50 of the start-to-exit time (target <= 50 ms more). Needs root,
 * ip netns, openssl, bwrap, pasta and nft.
 *
 *   BENCH_EGRESS_MB       size of the download (default 256)
 *   BENCH_EGRESS_ROUNDS   rounds of each download (default 5)
 *   BENCH_EGRESS_STARTS   sandbox starts of each kind (default 30)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  resolveSandboxMode,
  type SandboxSpawnOptions,
  scrubbedEnvironment,
  spawnSandboxed,
} from '../../src/execution/sandbox/index.js';
import { EgressProxy } from '../../src/network/index.js';
import { startEgressHosts } from '../../test/support/egress-hosts.js';
import { percentile } from '../support/latency.js';

const count = (name: string, fallback: number) => Number(process.env[name] || fallback);
const megabytes = count('BENCH_EGRESS_MB', 256);
const rounds = count('BENCH_EGRESS_ROUNDS', 5);
const starts = count('BENCH_EGRESS_STARTS', 30);

const hosts = await startEgressHosts(['bench.test'], megabytes * 1024 * 1024);
const proxy = new EgressProxy({
  maxConnections: 16,
  byteBudget: Number.MAX_SAFE_INTEGER,
  allowedAddresses: hosts.range,
  hosts: { 'bench.test': [hosts.addresses.allowed] },
});
const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-bench-egress-'));
fs.chmodSync(workspace, 0o777);
try {
  const lease = await proxy.open({
    run: 'bench',
    phase: 'agent',
    rules: [{ host: 'bench.test', ports: [443] }],
    bind: '127.0.0.1',
  });
  const download = (viaProxy: boolean) => {
    const args = ['-sS', '-o', '/dev/null', '-w', '%{speed_download}', '--cacert', hosts.caFile, '--noproxy', ''];
    if (viaProxy) args.push('-x', `http://127.0.0.1:${lease.proxyPort}`);
    else args.push('--resolve', `bench.test:443:${hosts.addresses.allowed}`);
    return Number(execFileSync('curl', [...args, 'https://bench.test/big'], { encoding: 'utf8' })) / 1024 / 1024;
  };
  const direct: number[] = [];
  const proxied: number[] = [];
  download(false);
  download(true);
  for (let round = 0; round < rounds; round += 1) {
    direct.push(download(false));
    proxied.push(download(true));
  }
  lease.close();
  const median = (values: number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    );
  console.log(
    `download ${megabytes} MB over HTTPS, median of ${rounds}: direct ${median(direct).toFixed(0)} MB/s, through the proxy ${median(proxied).toFixed(0)} MB/s (${((100 * median(proxied)) / median(direct)).toFixed(0)}% of direct)`,
  );

  const mode = resolveSandboxMode('bwrap').mode;
  const start = async (egress: boolean) => {
    const began = performance.now();
    const held = egress
      ? await proxy.open({
          run: 'bench',
          phase: 'agent',
          rules: [{ host: 'bench.test', ports: [443] }],
          bind: '127.0.0.1',
        })
      : undefined;
    const options: SandboxSpawnOptions = {
      mode,
      argv: ['true'],
      cwd: workspace,
      env: scrubbedEnvironment({}, workspace),
      hiddenPaths: [],
      allowNetwork: true,
      ...(held ? { egress: { proxyPort: held.proxyPort, dnsPort: held.dnsPort } } : {}),
      timeoutMs: 60_000,
      maxOutputBytes: 10_000,
      keepStdinOpen: false,
    };
    const exit = await spawnSandboxed(options).exited;
    held?.close();
    if (exit.code !== 0) throw new Error(`the sandbox failed: ${JSON.stringify(exit)}`);
    return performance.now() - began;
  };
  const open: number[] = [];
  const leased: number[] = [];
  await start(false);
  await start(true);
  for (let index = 0; index < starts; index += 1) {
    open.push(await start(false));
    leased.push(await start(true));
  }
  const p50 = (values: number[]) =>
    percentile(
      [...values].sort((a, b) => a - b),
      50,
    );
  console.log(
    `networked bwrap start to exit, p50 of ${starts}: open network ${p50(open).toFixed(1)} ms, behind the proxy ${p50(leased).toFixed(1)} ms (+${(p50(leased) - p50(open)).toFixed(1)} ms)`,
  );
} finally {
  await proxy.stop();
  hosts.stop();
  fs.rmSync(workspace, { recursive: true, force: true });
}
