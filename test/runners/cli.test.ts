import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { hangarCli } from '../support/cli.js';
import { startTestServer, type TestServer } from '../support/server.js';

// `hangar runners` and `hangar run --runner` over a real server (issue 52, field 3).
let hangar: TestServer;

before(async () => {
  hangar = await startTestServer({}, { role: 'api' });
});
after(() => hangar.stop());

test('hangar runners create, list, get, update and delete; hangar run --runner records it', async () => {
  const env = { url: hangar.url, apiKey: hangar.apiKey };
  const created = await hangarCli(
    ['runners', 'create', '--name', 'cli-small', '--cpus', '0.5', '--memory', '256m', '--json'],
    env,
  );
  assert.equal(created.code, 0, created.stderr);
  const uid = JSON.parse(created.stdout).uid as string;

  const list = await hangarCli(['runners', 'list'], env);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`${uid}\\s+cli-small\\s+\\S+\\s+0\\.5\\s+256m`));
  assert.match(list.stdout, /Default \(no runner\): /);

  const refused = await hangarCli(['runners', 'create', '--name', 'huge', '--cpus', '100000'], env);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /cpus/);

  const updated = await hangarCli(['runners', 'update', uid, '--name', 'cli-small', '--pids', '64', '--json'], env);
  assert.equal(updated.code, 0, updated.stderr);
  assert.deepEqual(JSON.parse(updated.stdout).limits, { pids: 64 });

  const run = await hangarCli(['run', 'shape me', '--runner', uid, '--json'], env);
  assert.equal(run.code, 0, run.stderr);
  const shown = await hangarCli(['runs', 'get', JSON.parse(run.stdout).run_id], env);
  assert.match(shown.stdout, new RegExp(`Runner:\\s+cli-small \\(${uid}\\): 64 processes`));

  // Agents and environments name it as their default with --default-runner.
  const agent = await hangarCli(
    ['agents', 'create', '--name', 'cli-runner-agent', '--default-runner', uid, '--json'],
    env,
  );
  assert.equal(agent.code, 0, agent.stderr);
  assert.equal(JSON.parse(agent.stdout).default_runner_uid, uid);
  const cleared = await hangarCli(
    ['agents', 'update', JSON.parse(agent.stdout).uid, '--default-runner', '', '--json'],
    env,
  );
  assert.equal(cleared.code, 0, cleared.stderr);
  assert.equal(JSON.parse(cleared.stdout).default_runner_uid, '');
  const environment = await hangarCli(
    ['environments', 'create', '--name', 'cli-runner-env', '--default-runner', uid, '--json'],
    env,
  );
  assert.equal(environment.code, 0, environment.stderr);
  assert.equal(JSON.parse(environment.stdout).config.default_runner_uid, uid);
  assert.match((await hangarCli(['environments', 'list'], env)).stdout, new RegExp(`cli-runner-env.*${uid}`));
  const unknown = await hangarCli(
    ['environments', 'create', '--name', 'cli-runner-x', '--default-runner', 'nope'],
    env,
  );
  assert.notEqual(unknown.code, 0);
  assert.match(unknown.stderr, /runner nope does not exist/);
  assert.equal((await hangarCli(['environments', 'delete', JSON.parse(environment.stdout).uid], env)).code, 0);

  assert.equal((await hangarCli(['runners', 'delete', uid], env)).code, 0);
  assert.notEqual((await hangarCli(['runners', 'get', uid], env)).code, 0);
});
