import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatBytes, parseBytes } from '../../../platform/bytes.js';
import { pullTarget } from './pull.js';

test('a pull names the tag, latest when the reference has none (else the engine pulls every tag)', () => {
  assert.deepEqual(pullTarget('debian'), { fromImage: 'debian', tag: 'latest' });
  assert.deepEqual(pullTarget('ghcr.io/acme/web:1.2'), { fromImage: 'ghcr.io/acme/web', tag: '1.2' });
  // A registry port is not a tag.
  assert.deepEqual(pullTarget('registry:5000/team/app'), { fromImage: 'registry:5000/team/app', tag: 'latest' });
  assert.deepEqual(pullTarget('ghcr.io/acme/web@sha256:abc'), { fromImage: 'ghcr.io/acme/web@sha256:abc' });
});

test('limits are read as operators write them and said as messages say them', () => {
  assert.equal(parseBytes('2g'), 2 * 1024 ** 3);
  assert.equal(parseBytes('512m'), 512 * 1024 ** 2);
  assert.equal(parseBytes('1.5GiB'), 1.5 * 1024 ** 3);
  assert.equal(parseBytes('lots'), undefined);
  assert.equal(formatBytes(2 * 1024 ** 3), '2 GiB');
  assert.equal(formatBytes(192 * 1024 ** 2), '192 MiB');
});
