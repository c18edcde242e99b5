import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redactCredentials } from './log-redaction.js';

const SECRET = 'Zm9vYmFyYmF6cXV4';

test('a url_token webhook token is redacted in every spelling the router accepts', () => {
  for (const path of [
    `/webhooks/w/UID/${SECRET}`,
    `//webhooks//w/UID/${SECRET}/`,
    `/WEBHOOKS/W/UID/${SECRET}`,
    `/%77ebhooks/w/UID/${SECRET}`,
    `/webhooks/w/UID%2F${SECRET}`,
    `/webhooks/w/UID/${SECRET}?x=1`,
  ]) {
    const line = JSON.stringify({ req: { url: path }, msg: `closed ${path} now` });
    const redacted = redactCredentials(line);
    assert.equal(redacted.includes(SECRET), false, `${path} -> ${redacted}`);
    assert.match(redacted, /UID\/\[redacted\]/, path);
  }
  // A webhook without a token in its URL keeps its uid.
  assert.equal(redactCredentials('"/webhooks/w/UID"'), '"/webhooks/w/UID"');
});

test('query parameters named like credentials are redacted, others kept', () => {
  const cases: Array<[string, string]> = [
    [`/d?expires=1&signature=${SECRET}`, '/d?expires=1&signature=[redacted]'],
    [`/d?%73ignature=${SECRET}&runs=a`, '/d?%73ignature=[redacted]&runs=a'],
    [`/d?signature[]=${SECRET}`, '/d?signature[]=[redacted]'],
    [`/p/v1beta/models?key=${SECRET}&alt=sse`, '/p/v1beta/models?key=[redacted]&alt=sse'],
    [
      `/x?X-Amz-Signature=${SECRET}&X-Amz-Credential=${SECRET}`,
      '/x?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]',
    ],
    [`/x?access_token=${SECRET}`, '/x?access_token=[redacted]'],
    ['/agent/runs?limit=5&cursor=abc&metadata[key]=v&q=x', '/agent/runs?limit=5&cursor=abc&metadata[key]=v&q=x'],
  ];
  for (const [url, expected] of cases)
    assert.equal(redactCredentials(JSON.stringify({ url })), JSON.stringify({ url: expected }));
});

test('the user information of a URL is redacted', () => {
  assert.equal(
    redactCredentials(`clone of https://x-access-token:${SECRET}@github.com/o/r.git failed`),
    'clone of https://[redacted]@github.com/o/r.git failed',
  );
});
