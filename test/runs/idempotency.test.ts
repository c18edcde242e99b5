import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { pruneIdempotencyKeys } from '../../src/runs/idempotency.js';
import { answerDroppingProxy } from '../support/answer-dropping-proxy.js';
import { hangarCli } from '../support/cli.js';
import { spawnKeyedServer, stopChild } from '../support/processes.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';

let hangar: TestServer;
before(async () => {
  // API only: the runs stay QUEUED.
  hangar = await startTestServer({}, { role: 'api' });
});
after(() => hangar.stop());

function create(body: unknown, key?: string, options: { apiKey?: string; path?: string } = {}) {
  return hangar.request('POST', options.path ?? '/agent/runs', {
    body,
    apiKey: options.apiKey,
    headers: key === undefined ? {} : { 'idempotency-key': key },
  });
}

/** The runs stored with this prompt, in any team. */
async function runsWithPrompt(prompt: string): Promise<string[]> {
  const rows = await hangar.db.selectFrom('runs').select('id').where('prompt', '=', prompt).execute();
  return rows.map((row) => row.id);
}

describe('Idempotency-Key on POST /agent/runs', () => {
  test('a retry with the same key gets the first answer and creates no second run', async () => {
    const key = randomUUID();
    const prompt = `retry ${key}`;
    const first = await create({ prompt, metadata: { a: '1', b: '2' } }, key);
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    // The same body with its members in another order is the same request.
    const again = await create({ metadata: { b: '2', a: '1' }, prompt }, key);
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(await runsWithPrompt(prompt), [first.body.run_id]);
  });

  test('a run with attachments is created once too', async () => {
    const key = randomUUID();
    const prompt = `attachments ${key}`;
    const body = { prompt, attachments: [{ file_name: 'a.txt', mime_type: 'text/plain', data: 'aGVsbG8=' }] };
    const first = await create(body, key);
    assert.equal(first.status, 200);
    const again = await create(body, key);
    assert.deepEqual(again.body, first.body);
    assert.deepEqual(await runsWithPrompt(prompt), [first.body.run_id]);
  });

  test('the deprecated POST /agent/run honours the key and shares it with POST /agent/runs', async () => {
    const key = randomUUID();
    const prompt = `deprecated ${key}`;
    const first = await create({ prompt }, key, { path: '/agent/run' });
    assert.equal(first.status, 200);
    const again = await create({ prompt }, key, { path: '/agent/run' });
    assert.deepEqual(again.body, first.body);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    const viaNew = await create({ prompt }, key);
    assert.deepEqual(viaNew.body, first.body);
    assert.deepEqual(await runsWithPrompt(prompt), [first.body.run_id]);
  });

  test('the same key with another body, or from another member, is refused with 422 idempotency_key_reused', async () => {
    const key = randomUUID();
    const prompt = `reuse ${key}`;
    const first = await create({ prompt }, key);
    assert.equal(first.status, 200);
    const otherBody = await create({ prompt: `${prompt} changed` }, key);
    assert.equal(otherBody.status, 422);
    assert.equal(otherBody.body.error_code, 'idempotency_key_reused');
    assert.equal(otherBody.body.retryable, false);
    assert.match(otherBody.headers.get('content-type') ?? '', /^application\/problem\+json/);
    assert.match(otherBody.body.detail, /different request/);

    const colleague = await hangar.addUser(hangar.teamUid);
    const fromColleague = await create({ prompt }, key, { apiKey: colleague.apiKey });
    assert.equal(fromColleague.status, 422);
    assert.equal(fromColleague.body.error_code, 'idempotency_key_reused');
    assert.deepEqual(await runsWithPrompt(prompt), [first.body.run_id]);
    assert.deepEqual(await runsWithPrompt(`${prompt} changed`), []);
  });

  test("keys are per team: another team's same key makes its own run", async () => {
    const key = randomUUID();
    const prompt = `teams ${key}`;
    const first = await create({ prompt }, key);
    const other = await hangar.createTeamWithUser();
    const second = await create({ prompt }, key, { apiKey: other.apiKey });
    assert.equal(second.status, 200);
    assert.equal(second.headers.get('idempotent-replayed'), null);
    assert.notEqual(second.body.run_id, first.body.run_id);
    assert.deepEqual((await runsWithPrompt(prompt)).sort(), [first.body.run_id, second.body.run_id].sort());
  });

  test('concurrent requests with one key make exactly one run, and all get its answer', async () => {
    const key = randomUUID();
    const prompt = `concurrent ${key}`;
    const answers = await Promise.all(Array.from({ length: 20 }, () => create({ prompt }, key)));
    for (const answer of answers) assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const runIds = new Set(answers.map((answer) => answer.body.run_id));
    assert.equal(runIds.size, 1);
    assert.deepEqual(await runsWithPrompt(prompt), [...runIds]);
    assert.equal(answers.filter((answer) => answer.headers.get('idempotent-replayed') === null).length, 1);
  });

  test('a refused create keeps no key: the corrected request with the same key creates the run', async () => {
    const key = randomUUID();
    const prompt = `refused ${key}`;
    const refused = await create({ prompt, config: { environment_id: 'not-an-environment' } }, key);
    assert.equal(refused.status, 400);
    const created = await create({ prompt }, key);
    assert.equal(created.status, 200);
    assert.equal(created.headers.get('idempotent-replayed'), null);
    assert.deepEqual(await runsWithPrompt(prompt), [created.body.run_id]);
  });

  test('a key stands for 24 hours: after that, the same key creates a new run', async () => {
    const key = randomUUID();
    const prompt = `expiry ${key}`;
    const first = await create({ prompt }, key);
    assert.equal(first.status, 200);
    await hangar.db
      .updateTable('run_idempotency_keys')
      .set({ created_at: sql`clock_timestamp() - interval '24 hours 1 second'` })
      .where('idempotency_key', '=', key)
      .execute();
    const later = await create({ prompt: `${prompt} again` }, key);
    assert.equal(later.status, 200);
    assert.equal(later.headers.get('idempotent-replayed'), null);
    assert.notEqual(later.body.run_id, first.body.run_id);
    // The new run owns the key now.
    const replay = await create({ prompt: `${prompt} again` }, key);
    assert.deepEqual(replay.body, later.body);
    const justInside = await hangar.db
      .updateTable('run_idempotency_keys')
      .set({ created_at: sql`clock_timestamp() - interval '23 hours 59 minutes'` })
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
    assert.equal(justInside.numUpdatedRows, 1n);
    assert.deepEqual((await create({ prompt: `${prompt} again` }, key)).body, later.body);
  });

  test('retention deletes the keys past 24 hours and keeps the others', async () => {
    const [old, fresh] = [randomUUID(), randomUUID()];
    assert.equal((await create({ prompt: `retention ${old}` }, old)).status, 200);
    assert.equal((await create({ prompt: `retention ${fresh}` }, fresh)).status, 200);
    await hangar.db
      .updateTable('run_idempotency_keys')
      .set({ created_at: sql`clock_timestamp() - interval '25 hours'` })
      .where('idempotency_key', '=', old)
      .execute();
    await pruneIdempotencyKeys(hangar.db);
    const kept = await hangar.db
      .selectFrom('run_idempotency_keys')
      .select('idempotency_key')
      .where('idempotency_key', 'in', [old, fresh])
      .execute();
    assert.deepEqual(
      kept.map((row) => row.idempotency_key),
      [fresh],
    );
  });

  test('an empty, blank or over-long key is refused with 400', async () => {
    for (const key of ['', '   ', 'k'.repeat(256), 'caf\u00e9']) {
      const answer = await create({ prompt: 'bad key' }, key);
      assert.equal(answer.status, 400, `key ${JSON.stringify(key)}`);
      assert.equal(answer.body.error_code, 'invalid_request');
    }
    assert.deepEqual(await runsWithPrompt('bad key'), []);
    assert.equal((await create({ prompt: `long key ${randomUUID()}` }, 'k'.repeat(255))).status, 200);
  });
});

describe('a lost answer', () => {
  test('the server is SIGKILLed after committing the run, before answering: the retry after restart gets the run', async (t) => {
    const database = await createTestDatabase();
    t.after(() => database.drop());
    let server = await spawnKeyedServer(database);
    // The restart with the key of the first start.
    const { env, headers } = server;
    t.after(() => stopChild(server.child, 'SIGKILL'));
    const proxy = await answerDroppingProxy(Number(new URL(server.url).port));
    t.after(() => proxy.close());

    const key = randomUUID();
    const send = () =>
      fetch(`${proxy.url}/api/v1/agent/runs`, {
        method: 'POST',
        headers: { ...headers, 'idempotency-key': key },
        body: JSON.stringify({ prompt: 'made once across a crash' }),
      });
    const victim = server.child;
    const dropped = proxy.dropNextAnswer(() => victim.kill('SIGKILL'));
    await assert.rejects(send(), 'the client never gets the first answer');
    const lost = await dropped;
    assert.equal((await stopChild(victim)).signal, 'SIGKILL');
    assert.match(lost, /^HTTP\/1\.1 200 /, `the lost answer was a created run; it began:\n${lost}\n${server.output()}`);

    server = await spawnKeyedServer(database, env);
    proxy.targetPort = Number(new URL(server.url).port);
    const retry = await send();
    assert.equal(retry.status, 200);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    const answer = (await retry.json()) as { run_id: string; state: string };
    assert.equal(answer.state, 'QUEUED');
    const list = await server.hangar.request('GET', '/agent/runs?limit=500');
    const runs = (list.body as { runs: Array<{ run_id: string; prompt: string }> }).runs;
    assert.deepEqual(
      runs.map((run) => run.run_id),
      [answer.run_id],
      'the crash committed exactly one run, the one the retry is told about',
    );
  });

  test('`hangar run` asks again with its key when the answer is lost, and makes one run', async (t) => {
    const proxy = await answerDroppingProxy(Number(new URL(hangar.url).port));
    t.after(() => proxy.close());
    const prompt = `cli ${randomUUID()}`;
    const dropped = proxy.dropNextAnswer();
    const cli = await hangarCli(['run', prompt, '--json'], { url: proxy.url, apiKey: hangar.apiKey });
    await dropped;
    assert.equal(cli.code, 0, cli.stderr);
    const printed = JSON.parse(cli.stdout) as { run_id: string };
    assert.deepEqual(await runsWithPrompt(prompt), [printed.run_id]);
  });
});
