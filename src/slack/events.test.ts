import assert from 'node:assert/strict';
import test from 'node:test';
import { chooseEnvironment, mentionPrompt, readSlackRequest } from './events.js';

const callback = (event: Record<string, unknown>) => ({
  type: 'event_callback',
  team_id: 'T0001',
  event_id: 'Ev0001',
  event: { channel: 'C0001', user: 'U0001', ts: '1700000000.000100', ...event },
});

test('the URL verification handshake answers its challenge', () => {
  assert.deepEqual(readSlackRequest({ type: 'url_verification', challenge: 'abc' }), {
    kind: 'url_verification',
    challenge: 'abc',
  });
  assert.equal(readSlackRequest({ type: 'url_verification' }).kind, 'ignored');
});

test('a mention in a channel starts a thread of its own; one in a thread answers there', () => {
  assert.deepEqual(readSlackRequest(callback({ type: 'app_mention', text: '<@UBOT> fix it' })), {
    kind: 'mention',
    eventId: 'Ev0001',
    teamId: 'T0001',
    channel: 'C0001',
    user: 'U0001',
    text: '<@UBOT> fix it',
    ts: '1700000000.000100',
    threadTs: '1700000000.000100',
  });
  const inThread = readSlackRequest(callback({ type: 'app_mention', text: 'x', thread_ts: '1699999999.000001' }));
  assert.equal(inThread.kind === 'mention' && inThread.threadTs, '1699999999.000001');
});

test('a message counts only as a reply inside a thread; bots and edits start nothing', () => {
  assert.equal(
    readSlackRequest(callback({ type: 'message', text: 'more', thread_ts: '1699999999.000001' })).kind,
    'reply',
  );
  assert.equal(readSlackRequest(callback({ type: 'message', text: 'chatter' })).kind, 'ignored');
  assert.equal(
    readSlackRequest(callback({ type: 'message', text: 'Run started', thread_ts: '1.2', bot_id: 'B1' })).kind,
    'ignored',
  );
  assert.equal(
    readSlackRequest(callback({ type: 'message', subtype: 'message_changed', thread_ts: '1699999999.000001' })).kind,
    'ignored',
  );
});

test('an event missing or malforming its workspace, channel, user or time starts nothing', () => {
  for (const event of [
    { type: 'app_mention', text: 'x', user: undefined },
    { type: 'app_mention', text: 'x', channel: 'c-lower' },
    { type: 'app_mention', text: 'x', ts: 'yesterday' },
    { type: 'app_mention', text: 42 },
  ])
    assert.equal(readSlackRequest(callback(event)).kind, 'ignored', JSON.stringify(event));
  assert.equal(
    readSlackRequest({ ...callback({ type: 'app_mention', text: 'x' }), team_id: undefined }).kind,
    'ignored',
  );
  assert.equal(readSlackRequest('nope').kind, 'ignored');
  assert.equal(readSlackRequest({ type: 'app_rate_limited' }).kind, 'ignored');
});

test("a mention's prompt drops the app's mention and the env word, which names the environment", () => {
  assert.deepEqual(mentionPrompt('<@UBOT> env:staging  fix the login page', 'UBOT'), {
    prompt: 'fix the login page',
    environmentName: 'staging',
  });
  assert.deepEqual(mentionPrompt('<@UBOT> fix it, see <@U0002>', 'UBOT'), { prompt: 'fix it, see <@U0002>' });
  // Only a word of its own: a URL's or a path's "env:" names nothing.
  assert.deepEqual(mentionPrompt('<@UBOT> read https://x/env:prod', 'UBOT'), { prompt: 'read https://x/env:prod' });
});

test('the named environment wins, then the channel default, then the team default', () => {
  assert.equal(chooseEnvironment({ named: 'a', channelDefault: 'b', teamDefault: 'c' }), 'a');
  assert.equal(chooseEnvironment({ named: undefined, channelDefault: 'b', teamDefault: 'c' }), 'b');
  assert.equal(chooseEnvironment({ named: undefined, channelDefault: undefined, teamDefault: 'c' }), 'c');
  assert.equal(chooseEnvironment({ named: undefined, channelDefault: undefined, teamDefault: undefined }), undefined);
});
