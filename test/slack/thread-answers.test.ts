import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SlackThreads } from '../../src/slack/thread-answers.js';
import { type SlackServer, startSlackServer } from '../support/slack-server.js';

let slack: SlackServer;

before(async () => {
  slack = await startSlackServer({ token: 'xoxb-test-token', channels: ['C0001'] });
});

after(async () => {
  await slack.close();
});

test('the bot answers in the thread with its token, then updates that one message', async () => {
  const threads = new SlackThreads('xoxb-test-token', { apiUrl: slack.apiUrl });
  const ts = await threads.post('C0001', '1699999999.000001', 'Run started: http://hangar/runs/1');
  await threads.update('C0001', ts, 'Run succeeded: pull request http://git/pr/1');
  assert.equal(slack.messages.length, 1);
  assert.deepEqual(slack.messages[0], {
    channel: 'C0001',
    ts,
    threadTs: '1699999999.000001',
    text: 'Run succeeded: pull request http://git/pr/1',
    history: ['Run started: http://hangar/runs/1', 'Run succeeded: pull request http://git/pr/1'],
  });
  assert.deepEqual(
    slack.calls.map((call) => [call.method, call.authorization]),
    [
      ['chat.postMessage', 'Bearer xoxb-test-token'],
      ['chat.update', 'Bearer xoxb-test-token'],
    ],
  );
});

test("Slack's refusals reach the caller: a wrong token, a channel the bot is not in", async () => {
  await assert.rejects(
    new SlackThreads('xoxb-wrong', { apiUrl: slack.apiUrl }).post('C0001', '1.1', 'x'),
    /invalid_auth/,
  );
  await assert.rejects(
    new SlackThreads('xoxb-test-token', { apiUrl: slack.apiUrl }).post('C0999', '1.1', 'x'),
    /channel_not_found/,
  );
  await assert.rejects(
    new SlackThreads('xoxb-test-token', { apiUrl: slack.apiUrl }).update('C0001', '1.999', 'x'),
    /message_not_found/,
  );
});
