import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadSecretKey } from '../../src/platform/secret-key.js';
import { instanceSecret } from '../../src/platform/settings.js';
import { UrlSigner } from '../../src/platform/signed-urls.js';
import {
  eventually,
  eventuallySignalled,
  getRun,
  harnessEnv,
  outputTexts,
  script,
  timelineTypes,
  waitForState,
} from '../support/engine.js';
import { createRun } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** HANGAR_MAX_ARTIFACT_BYTES of the test server. */
const MAX_BYTES = 4096;
/** A 1x1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

async function fetchBytes(url: string, init: RequestInit = {}) {
  const response = await fetch(url, { redirect: 'manual', ...init });
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

/** Runs a script to its end and returns the run (it must succeed). */
async function runToEnd(hangar: TestServer, body: Record<string, unknown>, apiKey?: string) {
  const runId = await createRun(hangar, body, apiKey);
  let run: any;
  await eventuallySignalled(`run ${runId} ends`, async () =>
    ['SUCCEEDED', 'FAILED', 'ERROR'].includes((run = await getRun(hangar, runId, apiKey)).state),
  );
  assert.equal(run.state, 'SUCCEEDED', JSON.stringify(run));
  return run;
}

const byType = (run: any, type: string) => run.artifacts.find((artifact: any) => artifact.artifact_type === type);

describe('artifacts', () => {
  let hangar: TestServer;
  let otherTeam: { teamUid: string; apiKey: string };
  before(async () => {
    hangar = await startTestServer(harnessEnv({}, { HANGAR_MAX_ARTIFACT_BYTES: String(MAX_BYTES) }));
    otherTeam = await hangar.createTeamWithUser();
  });
  after(() => hangar.stop());

  test('every artifact type reported through the harness protocol is kept, listed and readable', async () => {
    const run = await runToEnd(hangar, {
      prompt: script(
        { file: { path: 'report.txt', content: 'the report\n' } },
        { file: { path: 'shot.png', base64: PNG } },
        {
          emit: { type: 'artifact', artifact_type: 'PLAN', data: { title: 'The plan', content: '# Steps\n1. fix it' } },
        },
        {
          emit: {
            type: 'artifact',
            artifact_type: 'PULL_REQUEST',
            data: { url: 'https://GitHub.com/acme/api/pull/7/', branch: 'fix' },
          },
        },
        {
          emit: {
            type: 'artifact',
            artifact_type: 'EXTERNAL_REFERENCE',
            data: { reference_type: 'linear_issue', url: 'https://linear.app/acme/issue/ENG-1', title: 'ENG-1' },
          },
        },
        {
          emit: { type: 'artifact', artifact_type: 'FILE', data: { path: 'report.txt', description: 'what happened' } },
        },
        {
          emit: { type: 'artifact', artifact_type: 'SCREENSHOT', data: { path: 'shot.png', description: 'the page' } },
        },
        { emit: { type: 'artifact', artifact_type: 'FILE', data: { path: '../../../../etc/passwd' } } },
        { file: { path: 'big.bin', content: 'x'.repeat(MAX_BYTES + 1) } },
        { emit: { type: 'artifact', artifact_type: 'FILE', data: { path: 'big.bin' } } },
        { emit: { type: 'artifact', artifact_type: 'PULL_REQUEST', data: { url: 'ftp://nowhere' } } },
        { emit: { type: 'progress', message: 'half way', percent: 50 } },
        { done: 'ok' },
      ),
    });
    assert.deepEqual(run.artifacts.map((artifact: any) => artifact.artifact_type).sort(), [
      'EXTERNAL_REFERENCE',
      'FILE',
      'PLAN',
      'PULL_REQUEST',
      'SCREENSHOT',
    ]);
    assert.deepEqual(byType(run, 'PULL_REQUEST').data, { url: 'https://github.com/acme/api/pull/7', branch: 'fix' });
    assert.equal(byType(run, 'EXTERNAL_REFERENCE').data.reference_type, 'linear_issue');
    const file = byType(run, 'FILE').data;
    assert.match(file.artifact_uid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.deepEqual(
      { ...file, artifact_uid: 'x' },
      {
        artifact_uid: 'x',
        filename: 'report.txt',
        filepath: 'report.txt',
        mime_type: 'text/plain',
        description: 'what happened',
        size_bytes: 11,
      },
    );
    assert.equal(byType(run, 'SCREENSHOT').data.mime_type, 'image/png');

    // The two bad ones were refused with their reason on the timeline; the run went on.
    const timeline = await hangar.request('GET', `/agent/runs/${run.run_id}/timeline`);
    const refused = timeline.body.events.filter((event: any) => event.event_type === 'artifact_refused');
    assert.deepEqual(
      refused.map((event: any) => event.payload.artifact_type),
      ['FILE', 'FILE', 'PULL_REQUEST'],
    );
    assert.match(refused[0].payload.reason, /outside the workspace|no such file/);
    assert.match(refused[1].payload.reason, /more than the 4096 allowed \(HANGAR_MAX_ARTIFACT_BYTES\)/);
    assert.match(refused[2].payload.reason, /http or https/);
    const progress = timeline.body.events.filter((event: any) => event.event_type === 'agent_progress');
    assert.deepEqual(
      progress.map((event: any) => event.payload),
      [{ message: 'half way', percent: 50 }],
    );

    const plan = await hangar.request('GET', `/agent/artifacts/${byType(run, 'PLAN').data.artifact_uid}`);
    assert.equal(plan.status, 200);
    assert.equal(plan.body.data.content, '# Steps\n1. fix it');
    assert.match(plan.body.data.content_type, /^text\/markdown/);
    assert.equal(plan.body.data.title, 'The plan');

    const got = await hangar.request('GET', `/agent/artifacts/${file.artifact_uid}`);
    assert.equal(got.status, 200);
    assert.equal(got.body.artifact_type, 'FILE');
    assert.equal(got.body.data.filepath, 'report.txt');
    assert.ok(new Date(got.body.data.expires_at).getTime() > Date.now());
    const download = await fetchBytes(got.body.data.download_url);
    assert.equal(download.status, 200);
    assert.equal(download.bytes.toString(), 'the report\n');
    assert.match(download.headers.get('content-disposition')!, /^attachment; filename\*=UTF-8''report\.txt$/);

    const screenshot = await hangar.request('GET', `/agent/artifacts/${byType(run, 'SCREENSHOT').data.artifact_uid}`);
    const image = await fetchBytes(screenshot.body.data.download_url);
    assert.equal(image.headers.get('content-type'), 'image/png');
    assert.deepEqual(image.bytes, Buffer.from(PNG, 'base64'));

    // /download redirects to the same kind of link; plans download their text; links carry nothing to download.
    const redirect = await fetchBytes(`${hangar.apiUrl}/agent/artifacts/${file.artifact_uid}/download`, {
      headers: { authorization: `Bearer ${hangar.apiKey}` },
    });
    assert.equal(redirect.status, 302);
    assert.equal((await fetchBytes(redirect.headers.get('location')!)).bytes.toString(), 'the report\n');
    const planText = await fetchBytes(
      `${hangar.apiUrl}/agent/artifacts/${byType(run, 'PLAN').data.artifact_uid}/download`,
      { headers: { authorization: `Bearer ${hangar.apiKey}` } },
    );
    assert.equal((await fetchBytes(planText.headers.get('location')!)).bytes.toString(), '# Steps\n1. fix it');
    // A pull request is a link (its list item has no id; the database has).
    const pullRequest = await hangar.db
      .selectFrom('artifacts')
      .select('uid')
      .where('run_id', '=', run.run_id)
      .where('artifact_type', '=', 'PULL_REQUEST')
      .executeTakeFirstOrThrow();
    const nothing = await hangar.request('GET', `/agent/artifacts/${pullRequest.uid}/download`);
    assert.equal(nothing.status, 400);
    assert.equal(
      (await hangar.request('GET', `/agent/artifacts/${pullRequest.uid}`)).body.data.url,
      'https://github.com/acme/api/pull/7',
    );

    // The runs list filters by artifact type.
    const listed = await hangar.request('GET', '/agent/runs?artifact_type=SCREENSHOT');
    assert.ok(listed.body.runs.some((item: any) => item.run_id === run.run_id));
  });

  test('public artifacts need no key and hide their path; private ones need a key of the team', async () => {
    const run = await runToEnd(hangar, {
      prompt: script(
        { file: { path: 'open.txt', content: 'for everyone' } },
        { file: { path: 'closed.txt', content: 'for the team' } },
        { emit: { type: 'artifact', artifact_type: 'FILE', data: { path: 'open.txt' }, visibility: 'public' } },
        { emit: { type: 'artifact', artifact_type: 'FILE', data: { path: 'closed.txt' } } },
      ),
    });
    const [open, closed] = ['open.txt', 'closed.txt'].map(
      (name) => run.artifacts.find((artifact: any) => artifact.data.filename === name).data.artifact_uid,
    );

    const anonymous = await hangar.request('GET', `/agent/artifacts/${open}`, { apiKey: null });
    assert.equal(anonymous.status, 200);
    assert.equal(anonymous.body.data.filepath, undefined);
    assert.equal(anonymous.body.data.filename, 'open.txt');
    assert.equal((await fetchBytes(anonymous.body.data.download_url)).bytes.toString(), 'for everyone');
    const anonymousRedirect = await fetchBytes(`${hangar.apiUrl}/agent/artifacts/${open}/download`);
    assert.equal(anonymousRedirect.status, 302);
    // Another team reads a public artifact too.
    assert.equal((await hangar.request('GET', `/agent/artifacts/${open}`, { apiKey: otherTeam.apiKey })).status, 200);

    const noKey = await hangar.request('GET', `/agent/artifacts/${closed}`, { apiKey: null });
    assert.equal(noKey.status, 401);
    assert.equal(noKey.body.error_code, 'authentication_required');
    assert.equal((await fetchBytes(`${hangar.apiUrl}/agent/artifacts/${closed}/download`)).status, 401);
    assert.equal(
      (await hangar.request('GET', `/agent/artifacts/${closed}`, { apiKey: 'hgr_not_a_real_key' })).status,
      401,
    );
    const stranger = await hangar.request('GET', `/agent/artifacts/${closed}`, { apiKey: otherTeam.apiKey });
    assert.equal(stranger.status, 404);
    assert.equal(
      (await hangar.request('GET', `/agent/artifacts/${closed}/download`, { apiKey: otherTeam.apiKey })).status,
      404,
    );
    const member = await hangar.request('GET', `/agent/artifacts/${closed}`);
    assert.equal(member.status, 200);
    assert.equal(member.body.data.filepath, 'closed.txt');

    // A personal run's private artifact is for its creator, not for the rest of the team.
    const colleague = await hangar.addUser(hangar.teamUid, 'member');
    const personal = await runToEnd(
      hangar,
      {
        team: false,
        prompt: script(
          { file: { path: 'mine.txt', content: 'mine' } },
          { emit: { type: 'artifact', artifact_type: 'FILE', data: { path: 'mine.txt' } } },
        ),
      },
      colleague.apiKey,
    );
    const mine = personal.artifacts[0].data.artifact_uid;
    assert.equal((await hangar.request('GET', `/agent/artifacts/${mine}`, { apiKey: colleague.apiKey })).status, 200);
    assert.equal((await hangar.request('GET', `/agent/artifacts/${mine}`)).status, 403);

    // Unknown ids, well formed or not, are 404.
    assert.equal((await hangar.request('GET', '/agent/artifacts/00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal((await hangar.request('GET', '/agent/artifacts/not-a-uuid')).status, 404);
  });

  test('signed links expire and cannot be altered to reach another artifact', async () => {
    const run = await runToEnd(hangar, {
      prompt: script(
        { file: { path: 'a.txt', content: 'A' } },
        { file: { path: 'b.txt', content: 'B' } },
        { emit: { type: 'artifact', artifact_type: 'FILE', data: { path: 'a.txt' } } },
        { emit: { type: 'artifact', artifact_type: 'FILE', data: { path: 'b.txt' } } },
      ),
    });
    const [a, b] = ['a.txt', 'b.txt'].map(
      (name) => run.artifacts.find((artifact: any) => artifact.data.filename === name).data.artifact_uid,
    );
    const link = new URL((await hangar.request('GET', `/agent/artifacts/${a}`)).body.data.download_url);
    assert.equal((await fetchBytes(link.toString())).bytes.toString(), 'A');

    const otherBlob = new URL(link);
    otherBlob.pathname = otherBlob.pathname.replace(a, b);
    const moved = await fetchBytes(otherBlob.toString());
    assert.equal(moved.status, 403);
    const tampered = new URL(link);
    tampered.searchParams.set('signature', `${tampered.searchParams.get('signature')!.slice(0, -2)}AA`);
    assert.equal((await fetchBytes(tampered.toString())).status, 403);
    const extended = new URL(link);
    extended.searchParams.set('expires', String(Number(extended.searchParams.get('expires')) + 3600));
    assert.equal((await fetchBytes(extended.toString())).status, 403);
    const unsigned = new URL(link);
    unsigned.search = '';
    assert.equal((await fetchBytes(unsigned.toString())).status, 403);

    // A link signed with the server's own key eleven minutes ago has expired.
    const signer = new UrlSigner(
      await instanceSecret(hangar.db, 'download_signing_key', loadSecretKey(undefined, hangar.dataDir)),
      () => hangar.url,
      600,
    );
    const stale = signer.sign(`/api/v1/downloads/artifacts/${a}`, 600, {}, Date.now() - 11 * 60_000);
    const expired = await fetchBytes(stale.url);
    assert.equal(expired.status, 403);
    assert.match(JSON.parse(expired.bytes.toString()).detail, /expired/);
  });

  test('the harness-support calls take the task token of a running execution only', async () => {
    const runId = await createRun(hangar, {
      prompt: script({ token: true }, { listen: true }),
      config: { harness: { type: 'listener' } },
    });
    let token = '';
    await eventually('the harness printed its task token', async () => {
      token =
        (await outputTexts(hangar, runId).catch(() => []))
          .find((text) => text.startsWith('token:'))
          ?.slice('token:'.length) ?? '';
      return token !== '';
    });
    const call = (path: string, init: RequestInit) => fetch(`${hangar.apiUrl}/harness-support/${path}`, init);
    const report = (authorization: string | undefined, body: unknown) =>
      call('report-artifact', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify(body),
      });
    const reference = {
      artifact_type: 'EXTERNAL_REFERENCE',
      data: { reference_type: 'ticket', url: 'https://tickets.example/T-9' },
    };

    const reported = await report(`Bearer ${token}`, reference);
    assert.equal(reported.status, 201);
    const artifact = (await reported.json()) as any;
    assert.equal(artifact.artifact_type, 'EXTERNAL_REFERENCE');
    assert.equal(artifact.data.url, 'https://tickets.example/T-9');

    const uploaded = await call('upload-artifact?artifact_type=FILE&filename=notes.md&description=notes', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/markdown' },
      body: '# notes',
    });
    assert.equal(uploaded.status, 201, await uploaded.clone().text());
    const note = (await uploaded.json()) as any;
    assert.equal(note.data.mime_type, 'text/markdown');
    assert.equal(note.data.size_bytes, 7);
    const screenshot = await call('upload-artifact?artifact_type=SCREENSHOT', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png' },
      body: Buffer.from(PNG, 'base64'),
    });
    assert.equal(screenshot.status, 201);
    const notAnImage = await call('upload-artifact?artifact_type=SCREENSHOT', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain' },
      body: 'x',
    });
    assert.equal(notAnImage.status, 400);
    const noName = await call('upload-artifact?artifact_type=FILE', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: 'x',
    });
    assert.equal(noName.status, 400);
    const tooLarge = await call('upload-artifact?artifact_type=FILE&filename=big.bin', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
      body: Buffer.alloc(MAX_BYTES + 1),
    });
    assert.equal(tooLarge.status, 413);

    const progressed = await call('report-progress', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'cloned', percent: 10 }),
    });
    assert.equal(progressed.status, 200);
    const timeline = await hangar.request('GET', `/agent/runs/${runId}/timeline`);
    assert.deepEqual(
      timeline.body.events
        .filter((event: any) => event.event_type === 'agent_progress')
        .map((event: any) => event.payload),
      [{ message: 'cloned', percent: 10 }],
    );
    const tooFar = await call('report-progress', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ message: 'x', percent: 101 }),
    });
    assert.equal(tooFar.status, 400);

    // Bad data is 400 naming the problem; FILE cannot be described, only uploaded.
    const badUrl = await report(`Bearer ${token}`, { artifact_type: 'PULL_REQUEST', data: { url: 'not a url' } });
    assert.equal(badUrl.status, 400);
    const missing = await report(`Bearer ${token}`, {
      artifact_type: 'EXTERNAL_REFERENCE',
      data: { url: 'https://x.example' },
    });
    assert.equal(missing.status, 400);
    assert.match(((await missing.json()) as any).detail, /reference_type/);
    assert.equal((await report(`Bearer ${token}`, { artifact_type: 'FILE', data: {} })).status, 400);

    // No token, an API key, a forged token, or a token naming another execution: 401.
    for (const authorization of [
      undefined,
      `Bearer ${hangar.apiKey}`,
      `Bearer ${token}x`,
      `Bearer ${token.replace(runId, 'another-run')}`,
    ]) {
      assert.equal((await report(authorization, reference)).status, 401, String(authorization));
    }

    const sent = await hangar.request('POST', `/agent/runs/${runId}/followups`, { body: { message: 'bye' } });
    assert.equal(sent.status, 200);
    const ended = await waitForState(hangar, runId, 'SUCCEEDED', 'FAILED', 'ERROR');
    assert.equal(ended.state, 'SUCCEEDED');
    assert.deepEqual(ended.artifacts.map((item: any) => item.artifact_type).sort(), [
      'EXTERNAL_REFERENCE',
      'FILE',
      'SCREENSHOT',
    ]);
    // Once the execution has ended its token is worthless.
    assert.equal((await report(`Bearer ${token}`, reference)).status, 401);
    assert.ok((await timelineTypes(hangar, runId)).includes('oz_run_done'));
  });

  test('run-by-external-reference finds the run in canonical form, for its team only', async () => {
    const run = await runToEnd(hangar, {
      prompt: script(
        {
          emit: {
            type: 'artifact',
            artifact_type: 'PULL_REQUEST',
            data: { url: 'https://github.com/acme/web/pull/42' },
          },
        },
        {
          emit: {
            type: 'artifact',
            artifact_type: 'EXTERNAL_REFERENCE',
            data: { reference_type: 'jira', url: 'https://jira.example/browse/ABC-7' },
          },
        },
      ),
    });
    const lookup = (url: string | undefined, apiKey?: string) =>
      hangar.request(
        'GET',
        `/agent/run-by-external-reference${url === undefined ? '' : `?url=${encodeURIComponent(url)}`}`,
        apiKey ? { apiKey } : {},
      );
    for (const url of [
      'https://github.com/acme/web/pull/42',
      'HTTPS://GITHUB.COM/acme/web/pull/42/',
      'https://github.com:443/acme/web/pull/42#issuecomment-1',
      'https://jira.example/browse/ABC-7',
    ]) {
      const found = await lookup(url);
      assert.equal(found.status, 200, url);
      assert.deepEqual(found.body, { run_id: run.run_id });
    }
    assert.equal((await lookup('https://github.com/ACME/web/pull/42')).status, 404);
    assert.equal((await lookup('https://github.com/acme/web/pull/43')).status, 404);
    assert.equal((await lookup('https://github.com/acme/web/pull/42', otherTeam.apiKey)).status, 404);
    assert.equal((await lookup(undefined)).status, 400);
    assert.equal((await lookup(`https://example.com/${'x'.repeat(2049 - 20)}`)).status, 400);
    assert.equal((await lookup('not a url')).status, 400);
    assert.equal(
      (await hangar.request('GET', '/agent/run-by-external-reference?url=https://x.example', { apiKey: null })).status,
      401,
    );
  });
});
