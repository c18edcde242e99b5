import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatBytes, parseBytes } from '../../../platform/bytes.js';
import { runLimits } from './limits.js';
import { pullTarget, registryAuthHeader, registryOf } from './pull.js';

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

test('registry credentials name the registry the image reference names, Docker Hub when none', () => {
  assert.equal(registryOf('ghcr.io/acme/web:1.2'), 'ghcr.io');
  assert.equal(registryOf('registry:5000/team/app'), 'registry:5000');
  assert.equal(registryOf('localhost/hangar-test/debian:bookworm'), 'localhost');
  assert.equal(registryOf('acme/web'), 'https://index.docker.io/v1/');
  assert.equal(registryOf('debian:bookworm'), 'https://index.docker.io/v1/');
  assert.equal(registryOf('docker.io/library/debian:bookworm'), 'https://index.docker.io/v1/');
});

test('X-Registry-Auth is base64url with its padding, whatever the length (Podman 4.3 refuses it unpadded)', () => {
  for (const password of ['p', 'pw', 'pwd']) {
    const auth = { username: 'u', password, serveraddress: 'r.example' };
    const header = registryAuthHeader(auth);
    assert.equal(header.length % 4, 0, header);
    assert.match(header, /^[A-Za-z0-9_-]+={0,2}$/);
    assert.deepEqual(JSON.parse(Buffer.from(header, 'base64url').toString()), auth);
  }
});

test("an environment's limit requests replace the defaults, and a worker lowers them to its own maximums", () => {
  const defaults = { memoryBytes: 1024 ** 3, cpus: 1, pids: 1024 };
  const maximums = { memoryBytes: 2 * 1024 ** 3, cpus: 2, pids: 2048 };
  assert.deepEqual(runLimits(defaults, maximums, undefined), { limits: defaults, lowered: [] });
  assert.deepEqual(runLimits(defaults, maximums, { memory: '512m', cpus: 1.5 }), {
    limits: { memoryBytes: 512 * 1024 ** 2, cpus: 1.5, pids: 1024 },
    lowered: [],
  });
  assert.deepEqual(runLimits(defaults, maximums, { memory: '4g', pids: 4096 }), {
    limits: { memoryBytes: 2 * 1024 ** 3, cpus: 1, pids: 2048 },
    lowered: ['memory', 'pids'],
  });
});
