import assert from 'node:assert/strict';
import test from 'node:test';
import { SLACK_MAX_SKEW_SECONDS, slackSignature, slackSignatureRefusal } from './signature.js';

// The example in Slack's "Verifying requests from Slack": its signing secret, timestamp, body and signature.
const secret = '8f742231b10e8888abcd99yyyzzz85a5';
const timestamp = '1531420618';
const body =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const signature = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';
const at = (seconds: number) => new Date((Number(timestamp) + seconds) * 1000);

test("Slack's own example is signed as Slack signs it", () => {
  assert.equal(slackSignature(secret, timestamp, body), signature);
  assert.equal(slackSignatureRefusal(secret, { signature, timestamp }, Buffer.from(body), at(0)), undefined);
});

test('a request without a signature or a timestamp is unsigned', () => {
  assert.equal(slackSignatureRefusal(secret, { signature: undefined, timestamp }, body, at(0)), 'unsigned');
  assert.equal(slackSignatureRefusal(secret, { signature, timestamp: undefined }, body, at(0)), 'unsigned');
  assert.equal(slackSignatureRefusal(secret, { signature: '', timestamp }, body, at(0)), 'unsigned');
});

test('the five-minute window holds both ways, at its edge inclusive', () => {
  assert.equal(slackSignatureRefusal(secret, { signature, timestamp }, body, at(SLACK_MAX_SKEW_SECONDS)), undefined);
  assert.equal(slackSignatureRefusal(secret, { signature, timestamp }, body, at(-SLACK_MAX_SKEW_SECONDS)), undefined);
  assert.equal(slackSignatureRefusal(secret, { signature, timestamp }, body, at(SLACK_MAX_SKEW_SECONDS + 1)), 'stale');
  assert.equal(slackSignatureRefusal(secret, { signature, timestamp }, body, at(-SLACK_MAX_SKEW_SECONDS - 1)), 'stale');
  assert.equal(slackSignatureRefusal(secret, { signature, timestamp: '15314e6' }, body, at(0)), 'stale');
});

test('a captured request replayed with a fresh timestamp, another body or another secret does not verify', () => {
  const later = String(Number(timestamp) + 3600);
  assert.equal(slackSignatureRefusal(secret, { signature, timestamp: later }, body, at(3600)), 'mismatch');
  assert.equal(slackSignatureRefusal(secret, { signature, timestamp }, `${body}&x=1`, at(0)), 'mismatch');
  assert.equal(slackSignatureRefusal(`${secret}0`, { signature, timestamp }, body, at(0)), 'mismatch');
  assert.equal(
    slackSignatureRefusal(secret, { signature: signature.slice(0, -1), timestamp }, body, at(0)),
    'mismatch',
  );
  assert.equal(
    slackSignatureRefusal(secret, { signature: signature.replace('v0=', 'v1='), timestamp }, body, at(0)),
    'mismatch',
  );
});
