import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { resolveSandboxMode } from '../../src/execution/sandbox/index.js';
import { metricsRegistry } from '../../src/platform/metrics.js';
import { hangarCli } from '../support/cli.js';
import { type EgressHosts, egressHostsAvailable, startEgressHosts } from '../support/egress-hosts.js';
import { getRun, harnessEnv, outputTexts, script, waitForState } from '../support/engine.js';
import { stopChild } from '../support/processes.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startWorker, waitForConnections } from '../support/workers.js';

// Runs of an environment whose phases each have an allow list, under bwrap behind the egress proxy: real traffic to
// the test's own hosts (test/support/egress-hosts.ts). One run proves both phases: setup may reach allowed.test only
// and the agent other.test only, so each phase is held to its own list.
const skip = !egressHostsAvailable()
  ? 'needs root, ip netns and openssl'
  : resolveSandboxMode('bwrap').mode.kind !== 'bwrap'
    ? 'bwrap does not work here'
    : false;

// -k: the proxy judges the name the client sends (CONNECT, SNI), whatever certificate the server shows.
const curlTo = (host: string) => `curl -sS -k --max-time 20 https://${host}/ 2>&1 || echo "${host} failed with $?"`;

describe("a run's network by allow list", { skip, timeout: 180_000 }, () => {
  let hosts: EgressHosts;
  let hangar: TestServer;
  let env: Record<string, string>;
  before(async () => {
    hosts = await startEgressHosts(['allowed.test', 'other.test']);
    env = harnessEnv(
      {
        networked: {
          command: [process.execPath, new URL('../support/script-harness.mjs', import.meta.url).pathname],
          network: true,
        },
      },
      {
        HANGAR_SANDBOX: 'bwrap',
        HANGAR_EGRESS_HOSTS: `allowed.test=${hosts.addresses.allowed},other.test=${hosts.addresses.other}`,
        HANGAR_EGRESS_ALLOWED_ADDRESSES: hosts.range,
      },
    );
    hangar = await startTestServer(env);
  });
  after(async () => {
    await hangar?.stop();
    hosts?.stop();
  });

  test('setup and agent each reach their own hosts through the proxy and are refused the rest, with an account', async () => {
    const created = await hangar.request('POST', '/api/v1/environments', {
      body: {
        name: 'allow lists',
        setup_commands: [`${curlTo('allowed.test')}; ${curlTo('other.test')}`],
        network: { setup: { allow: ['allowed.test'] }, agent: { allow: ['other.test'] } },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const runId = await createRun(hangar, {
      prompt: script(
        { sh: `${curlTo('other.test')}; ${curlTo('allowed.test')}; ${curlTo('allowed.test')}` },
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
    const setup = timeline.find((event) => event.event_type === 'environment_setup_command');
    const setupOutput = String(setup?.payload.output_tail);
    assert.match(setupOutput, /hello from allowed\.test over https/);
    assert.match(setupOutput, /other\.test failed with/);
    assert.doesNotMatch(setupOutput, /hello from other\.test/);
    const said = (await outputTexts(hangar, runId)).join('\n');
    assert.match(said, /hello from other\.test over https/, said);
    assert.match(said, /allowed\.test failed with/, said);
    assert.doesNotMatch(said, /hello from allowed\.test/, said);

    // Each refused host on the timeline as it happened, the whole account with its counts at the end.
    const refused = timeline.filter((event) => event.event_type === 'network_refused').map((event) => event.payload);
    assert.deepEqual(
      refused.map(({ phase, host, port, reason, allow_line }) => ({ phase, host, port, reason, allow_line })),
      [
        { phase: 'setup', host: 'other.test', port: 443, reason: 'not_allowed', allow_line: 'other.test' },
        { phase: 'agent', host: 'allowed.test', port: 443, reason: 'not_allowed', allow_line: 'allowed.test' },
      ],
    );
    const account = timeline.find((event) => event.event_type === 'network_refusals')?.payload.refusals as Array<{
      host: string;
      attempts: number;
    }>;
    assert.deepEqual(
      account.map(({ host, attempts }) => ({ host, attempts })),
      [
        { host: 'other.test', attempts: 1 },
        { host: 'allowed.test', attempts: 2 },
      ],
    );
    const answered = await getRun(hangar, runId);
    assert.deepEqual(
      answered.network_refusals.map(({ phase, host, attempts }: Record<string, unknown>) => ({
        phase,
        host,
        attempts,
      })),
      [
        { phase: 'setup', host: 'other.test', attempts: 1 },
        { phase: 'agent', host: 'allowed.test', attempts: 2 },
      ],
    );
    // The CLI says the same, with what to add: `runs get` the account, the follow and the timeline each refusal.
    const cli = { url: hangar.url, apiKey: hangar.apiKey };
    const shown = await hangarCli(['runs', 'get', runId], cli);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(
      shown.stdout,
      /Refused hosts:\n {2}other\.test:443 \(setup, not allowed, once\); to allow it: "other\.test" in network\.setup\.allow\n {2}allowed\.test:443 \(agent, not allowed, 2 times\); to allow it: "allowed\.test" in network\.agent\.allow\n/,
    );
    const followed = await hangarCli(['runs', 'events', runId], cli);
    assert.equal(followed.code, 0, followed.stderr);
    assert.match(
      followed.stdout,
      /\[Host refused\] other\.test:443 \(setup, not allowed\); to allow it: "other\.test" in network\.setup\.allow\n/,
    );
    assert.match(followed.stdout, /\[Host refused\] allowed\.test:443 \(agent, not allowed\); to allow it:/);
    const steps = await hangarCli(['runs', 'timeline', runId], cli);
    assert.match(steps.stdout, /Host refused +other\.test:443 \(setup, not allowed\)/);

    // The server runs in this process: its counter has every attempt, under the run's environment.
    const counted = (await metricsRegistry.getSingleMetric('hangar_network_refusals_total')?.get())?.values ?? [];
    const ofEnvironment = counted.filter((sample) => sample.labels.environment === created.body.uid);
    assert.deepEqual(
      Object.fromEntries(
        ofEnvironment.map((sample) => [`${sample.labels.phase} ${sample.labels.reason}`, sample.value]),
      ),
      { 'setup not_allowed': 1, 'agent not_allowed': 2 },
    );
  });

  test("a self-hosted worker's run is held to its environment's lists by the worker's own proxy", async () => {
    const worker = startWorker(hangar, 'egress-box', { env });
    try {
      await waitForConnections(hangar, 'egress-box', 1);
      const created = await hangar.request('POST', '/api/v1/environments', {
        body: { name: 'on a worker', network: { setup: 'off', agent: { allow: ['other.test'] } } },
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const runId = await createRun(hangar, {
        prompt: script({ sh: `${curlTo('other.test')}; ${curlTo('allowed.test')}` }, { done: 'ok' }),
        config: { environment_id: created.body.uid, harness: { type: 'networked' }, worker_host: 'egress-box' },
      });
      const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
      assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
      const said = (await outputTexts(hangar, runId)).join('\n');
      assert.match(said, /hello from other\.test over https/, said);
      assert.match(said, /allowed\.test failed with/, said);
      const refused = (await getRun(hangar, runId)).network_refusals.map(
        ({ phase, host }: Record<string, unknown>) => `${phase} ${host}`,
      );
      assert.deepEqual(refused, ['agent allowed.test']);
    } finally {
      await stopChild(worker.child);
    }
  });

  test('git clones over HTTPS and npm installs from a registry through the proxy, only from an allowed host', async () => {
    // -c http.sslVerify=false and --strict-ssl=false: the test hosts' authority is not the sandbox's; the proxy
    // judges the names either way.
    const git = (host: string) =>
      `git -c http.sslVerify=false clone -q https://${host}/repo.git from-${host} 2>&1 && cat from-${host}/README || echo "git clone from ${host} failed"`;
    const npm =
      'npm install --no-audit --no-fund --no-update-notifier --strict-ssl=false --registry https://allowed.test/ egress-test-package >npm.log 2>&1 ' +
      `&& node -p "require('egress-test-package')" || { echo "npm install failed"; tail -5 npm.log; }`;
    const created = await hangar.request('POST', '/api/v1/environments', {
      body: {
        name: 'tools through the proxy',
        setup_commands: [`${git('allowed.test')}; ${git('other.test')}; ${npm}`],
        network: { setup: { allow: ['allowed.test'] }, agent: 'off' },
      },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const runId = await createRun(hangar, {
      prompt: script({ done: 'ok' }),
      config: { environment_id: created.body.uid, harness: { type: 'networked' } },
    });
    const run = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run.status_message));
    const timeline = (await hangar.request('GET', `/agent/runs/${runId}/timeline`)).body.events as Array<{
      event_type: string;
      payload: Record<string, unknown>;
    }>;
    const output = String(
      timeline.find((event) => event.event_type === 'environment_setup_command')?.payload.output_tail,
    );
    assert.match(output, /^egress repository$/m, output);
    assert.match(output, /git clone from other\.test failed/, output);
    assert.match(output, /^egress package$/m, output);
    const refused = (await getRun(hangar, runId)).network_refusals.map(
      ({ phase, host }: Record<string, unknown>) => `${phase} ${host}`,
    );
    assert.deepEqual(refused, ['setup other.test']);
  });
});
