import assert from 'node:assert/strict';
import { test } from 'node:test';
import { environmentImageProblem, isLocalImage, parseImageReference, qualifiedReference } from './image-reference.js';

const DIGEST = `sha256:${'ab12'.repeat(16)}`;

test('references are read as Docker reads them: registry, path, tag, digest', () => {
  assert.deepEqual(parseImageReference('ubuntu:24.04'), { path: 'ubuntu', tag: '24.04' });
  assert.deepEqual(parseImageReference('registry:5000/team/app'), { domain: 'registry:5000', path: 'team/app' });
  assert.deepEqual(parseImageReference(`ghcr.io/acme/web:1.2@${DIGEST}`), {
    domain: 'ghcr.io',
    path: 'acme/web',
    tag: '1.2',
    digest: DIGEST,
  });
  assert.deepEqual(parseImageReference('localhost/hangar-test/debian:bookworm'), {
    domain: 'localhost',
    path: 'hangar-test/debian',
    tag: 'bookworm',
  });
  // A hex name is a name once a tag or a registry says so.
  assert.deepEqual(parseImageReference('3:latest'), { path: '3', tag: 'latest' });
  assert.deepEqual(parseImageReference('ghcr.io/abc'), { domain: 'ghcr.io', path: 'abc' });
});

test('image IDs, their prefixes and sha256: forms are refused as IDs; malformed references as such', () => {
  for (const id of ['3', '19877d6c', 'f'.repeat(64), `${'f'.repeat(64)}:x`, DIGEST, 'sha256:3', 'SHA256:abc'])
    assert.match((parseImageReference(id) as { problem: string }).problem ?? '', /by its ID/, id);
  for (const bad of ['ubuntu latest', 'Ubuntu', 'acme/Web', 'ghcr.io/acme/web@sha256:abc', 'web:', '-x', ''])
    assert.match((parseImageReference(bad) as { problem: string }).problem ?? '', /not an image reference/, bad);
});

test("an environment cannot name Hangar's setup snapshots, in any spelling", () => {
  for (const snapshot of [
    `localhost/hangar-snapshot:${'a'.repeat(24)}`,
    'hangar-snapshot:x',
    `localhost/hangar-snapshot@${DIGEST}`,
  ])
    assert.match(environmentImageProblem(snapshot) ?? '', /setup snapshots/, snapshot);
  assert.equal(environmentImageProblem('ghcr.io/acme/hangar-snapshot:1'), undefined);
  assert.equal(environmentImageProblem('ubuntu:24.04'), undefined);
});

test('a qualified reference leaves the engine nothing to guess', () => {
  const qualified = (value: string) => qualifiedReference(parseImageReference(value) as never);
  assert.equal(qualified('ubuntu'), 'docker.io/library/ubuntu:latest');
  assert.equal(qualified('acme/web:2'), 'docker.io/acme/web:2');
  assert.equal(qualified('3:latest'), 'docker.io/library/3:latest');
  assert.equal(qualified(`ghcr.io/acme/web@${DIGEST}`), `ghcr.io/acme/web@${DIGEST}`);
  assert.equal(qualified('localhost/x:1'), 'localhost/x:1');
  assert.equal(isLocalImage(parseImageReference('localhost/x:1') as never), true);
  assert.equal(isLocalImage(parseImageReference('localhost:5000/x:1') as never), false);
});
