import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import YAML from 'yaml';
import { harnessEnv, waitForState } from '../support/engine.js';
import { spawnKeyedServer, stopChild, waitForOutput } from '../support/processes.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';

// A harness that prints every value it was given, every way a run's output is stored (see leaky-harness.mjs):
// nothing of a value of 8 characters or more may be stored, and each is shown as [REDACTED:NAME].
const LEAKY_HARNESS = fileURLToPath(new URL('../support/leaky-harness.mjs', import.meta.url));
const PROVIDER_KEY = 'sk-ant-provider-0f9e8d7c6b5a';
const EXACT = 'Q8zX-w7j'; // exactly 8 characters: redacted
const SHORT = 'abc1234'; // 7 characters: too short to redact (README says why)
const BOUNDARY = 'boundary-token-31415926';

let hangar: TestServer;

before(async () => {
  hangar = await startTestServer(
    harnessEnv(
      {
        leaky: {
          command: [process.execPath, LEAKY_HARNESS],
          network: true,
          env: {
            LEAK_NAMES: 'PROVIDER_API_KEY,EXACT_SECRET,SHORT_TOKEN',
            PROVIDER_API_KEY: '${ANTHROPIC_API_KEY}',
            EXACT_SECRET: EXACT,
            SHORT_TOKEN: SHORT,
            BOUNDARY_TOKEN: BOUNDARY,
            LEAK_BOUNDARY: 'BOUNDARY_TOKEN',
          },
        },
      },
      { ANTHROPIC_API_KEY: PROVIDER_KEY, HANGAR_SANDBOX: 'process' },
    ),
  );
});
after(() => hangar?.stop());

/** Every row the run left in the database, as text. */
async function storedRows(runId: string): Promise<string> {
  const rows = await Promise.all(
    ['runs', 'run_events', 'run_transcript', 'artifacts'].map((table) =>
      sql`select * from ${sql.table(table)} where ${sql.ref(table === 'runs' ? 'id' : 'run_id')} = ${runId}`.execute(
        hangar.db,
      ),
    ),
  );
  return JSON.stringify(rows.map((result) => result.rows));
}

/** Every blob under the data directory, as text (the artifacts' bytes). */
function storedBlobs(): string {
  const root = path.join(hangar.dataDir, 'blobs');
  if (!fs.existsSync(root)) return '';
  return (fs.readdirSync(root, { recursive: true }) as string[])
    .map((name) => path.join(root, name))
    .filter((file) => fs.statSync(file).isFile())
    .map((file) => fs.readFileSync(file, 'utf8'))
    .join('\n');
}

test('a harness printing every value it was given leaves none stored: transcript, conversation, timeline, status, artifacts', async () => {
  const created = await hangar.request('POST', '/agent/runs', {
    body: { prompt: 'leak everything', config: { harness: { type: 'leaky' } } },
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  const runId = created.body.run_id;
  const run = await waitForState(hangar, runId, 'FAILED', 'SUCCEEDED', 'ERROR');
  assert.equal(run.state, 'FAILED');

  const conversation = await hangar.request('GET', `/agent/runs/${runId}/conversation`);
  const timeline = await hangar.request('GET', `/agent/runs/${runId}/timeline`);
  const link = await fetch(`${hangar.apiUrl}/agent/runs/${runId}/transcript`, {
    headers: { authorization: `Bearer ${hangar.apiKey}` },
    redirect: 'manual',
  });
  assert.equal(link.status, 302);
  const transcript = await (await fetch(link.headers.get('location')!)).text();
  const artifacts = await Promise.all(
    (run.artifacts as Array<{ data: { artifact_uid: string } }>).map(
      async (artifact) => (await hangar.request('GET', `/agent/artifacts/${artifact.data.artifact_uid}`)).body,
    ),
  );
  const everything = [
    JSON.stringify(run),
    JSON.stringify(conversation.body),
    JSON.stringify(timeline.body),
    transcript,
    JSON.stringify(artifacts),
    await storedRows(runId),
    storedBlobs(),
  ].join('\n');

  // The harness did get them and print them: the marks stand where they were.
  for (const name of ['ANTHROPIC_API_KEY', 'EXACT_SECRET', 'BOUNDARY_TOKEN'])
    assert.ok(everything.includes(`[REDACTED:${name}]`), `no [REDACTED:${name}] anywhere`);
  assert.ok(transcript.includes('report: 201'), 'the harness-support report was accepted');

  // Neither whole nor either half of a split value of 8 characters or more is stored anywhere.
  for (const value of [PROVIDER_KEY, EXACT]) {
    const half = Math.floor(value.length / 2);
    for (const piece of [value, value.slice(0, half), value.slice(half)].filter((piece) => piece.length >= 4))
      assert.ok(!everything.includes(piece), `"${piece}" of a secret is stored`);
  }
  // The conversation keeps the two text events of the split value as two blocks, each with its mark, never the value.
  assert.ok(!JSON.stringify(conversation.body).includes(PROVIDER_KEY));
  assert.match(JSON.stringify(conversation.body), /split: \[REDACTED:ANTHROPIC_API_KEY\]"/);
  assert.match(JSON.stringify(conversation.body), /"\[REDACTED:ANTHROPIC_API_KEY\] \(end of split\)/);
  // The status message (failure message and stderr) and the PLANs, including the one reported over HTTP.
  assert.match(run.status_message.message, /\[REDACTED:ANTHROPIC_API_KEY\]/);
  const plans = artifacts.filter((artifact) => artifact.artifact_type === 'PLAN');
  assert.equal(plans.length, 6);
  for (const plan of plans) assert.ok(!plan.data.content.includes(PROVIDER_KEY));

  // The boundary, honestly: a value shorter than 8 characters is kept as it is; of a split with 3 characters on
  // the first line, those 3 stay and the rest is replaced.
  assert.ok(everything.includes(SHORT));
  assert.ok(transcript.includes(`boundary ${BOUNDARY.slice(0, 3)}`));
  assert.ok(transcript.includes('[REDACTED:BOUNDARY_TOKEN] after'));
  assert.ok(!everything.includes(BOUNDARY.slice(3)));
});

// Logs, through a real `hangar serve` process: the run's values reach the server in a request's path while the run
// executes, and the request's info log line on stdout shows the mark, never the value.
test("the server's log lines on stdout never hold a value given to a run", async () => {
  const database = await createTestDatabase();
  const configDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-log-redaction-'));
  const configFile = path.join(configDirectory, 'hangar.yaml');
  const deployToken = 'deploy-token-value-27182818';
  fs.writeFileSync(
    configFile,
    YAML.stringify({
      default_harness: 'leaky',
      harnesses: {
        leaky: {
          command: [process.execPath, LEAKY_HARNESS],
          network: true,
          env: {
            LEAK_NAMES: 'PROVIDER_API_KEY,DEPLOY_TOKEN',
            LEAK_IN_URL: '1',
            PROVIDER_API_KEY: '${ANTHROPIC_API_KEY}',
            DEPLOY_TOKEN: deployToken,
          },
        },
      },
    }),
  );
  const server = await spawnKeyedServer(database, {
    HANGAR_CONFIG: configFile,
    HANGAR_LOG_LEVEL: 'info',
    HANGAR_LOG_FORMAT: 'json',
    HANGAR_SANDBOX: 'process',
    ANTHROPIC_API_KEY: PROVIDER_KEY,
  });
  try {
    const created = await server.hangar.request('POST', '/agent/runs', { body: { prompt: 'leak into the log' } });
    assert.equal(created.status, 200);
    const runId = created.body.run_id as string;
    await waitForState(server.hangar, runId, 'FAILED', 'SUCCEEDED', 'ERROR');
    // The leaking requests are logged.
    await waitForOutput(
      server,
      (output) => output.split('\n').filter((line) => line.includes('/harness-support/leak/')).length >= 2,
    );
    const output = server.output();
    const leaking = output.split('\n').filter((line) => line.includes('/harness-support/leak/'));
    assert.ok(
      leaking.some(
        (line) => line.includes('REDACTED%3AANTHROPIC_API_KEY') || line.includes('[REDACTED:ANTHROPIC_API_KEY]'),
      ),
      leaking.join('\n'),
    );
    assert.ok(
      leaking.some((line) => line.includes('REDACTED%3ADEPLOY_TOKEN') || line.includes('[REDACTED:DEPLOY_TOKEN]')),
      leaking.join('\n'),
    );
    for (const value of [PROVIDER_KEY, deployToken])
      assert.ok(!output.includes(value) && !output.includes(encodeURIComponent(value)), `${value} is in the log`);
  } finally {
    await stopChild(server.child);
    await database.drop();
    fs.rmSync(configDirectory, { recursive: true, force: true });
  }
});
