import assert from 'node:assert/strict';
import { test } from 'node:test';
import { canonicalUrl } from './canonical-url.js';

test('scheme and host case, default ports, trailing slashes and fragments do not matter', () => {
  const canonical = 'https://github.com/Acme/api/pull/7';
  for (const variant of [
    'https://github.com/Acme/api/pull/7',
    'HTTPS://GitHub.COM/Acme/api/pull/7',
    'https://github.com:443/Acme/api/pull/7',
    'https://github.com/Acme/api/pull/7/',
    'https://github.com/Acme/api/pull/7//',
    'https://github.com/Acme/api/pull/7#discussion',
    '  https://github.com/Acme/api/pull/7  ',
  ]) {
    assert.equal(canonicalUrl(variant), canonical, variant);
  }
  assert.equal(canonicalUrl('http://jira.example:80/browse/ABC-1'), 'http://jira.example/browse/ABC-1');
});

test('path case, other ports and the query are kept', () => {
  assert.notEqual(
    canonicalUrl('https://github.com/acme/api/pull/7'),
    canonicalUrl('https://github.com/Acme/api/pull/7'),
  );
  assert.equal(canonicalUrl('https://git.example:8443/x'), 'https://git.example:8443/x');
  assert.equal(canonicalUrl('https://linear.app/t/issue?id=5&b=2'), 'https://linear.app/t/issue?id=5&b=2');
  assert.equal(canonicalUrl('https://example.com'), 'https://example.com/');
  assert.equal(canonicalUrl('https://example.com/'), 'https://example.com/');
});

test('anything but an http(s) address without credentials is refused', () => {
  for (const bad of [
    '',
    'not a url',
    'ftp://example.com/x',
    'javascript:alert(1)',
    'https://user:pw@example.com/x',
    '/relative/path',
  ]) {
    assert.equal(canonicalUrl(bad), null, bad);
  }
});
