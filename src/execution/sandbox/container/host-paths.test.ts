import assert from 'node:assert/strict';
import { test } from 'node:test';
import { hostBind, hostPathMapper, mountPoints, type OwnContainer, ownContainerIds } from './host-paths.js';

const DOCKER_ID = 'c52d7528b3aad1ea0da974198c0dcfd9944de3b3f9ddfde895463f40fad85d2f';
const PODMAN_ID = '9418a4eee3cba3d1041113aa88e60f8e706dd8f665829d4c15f7b191c83a711a';
// Lines as the two engines' containers show them (measured with Docker 20.10 and Podman 4.3; lowerdir shortened).
const DOCKER_MOUNTINFO = [
  `612 541 0:52 / / rw,relatime master:310 - overlay overlay rw,lowerdir=/var/lib/docker/overlay2/l/AB:/var/lib/docker/overlay2/l/CD,upperdir=/var/lib/docker/overlay2/${'a'.repeat(64)}/diff`,
  `620 612 254:0 /var/lib/docker/containers/${DOCKER_ID}/resolv.conf /etc/resolv.conf rw,relatime - ext4 /dev/vda rw`,
  `621 612 254:0 /var/lib/docker/containers/${DOCKER_ID}/hostname /etc/hostname rw,relatime - ext4 /dev/vda rw`,
  '622 612 254:0 /var/lib/docker/volumes/hangar-data/_data /data rw,relatime - ext4 /dev/vda rw',
  '623 612 254:0 /srv/with\\040space /srv/with\\040space rw,relatime - ext4 /dev/vda rw',
].join('\n');
const PODMAN_MOUNTINFO = [
  `93 65 0:41 / / rw,relatime - overlay overlay rw,lowerdir=/var/lib/containers/storage/overlay/l/ZN,upperdir=/var/lib/containers/storage/overlay/${'b'.repeat(64)}/diff`,
  `101 93 254:0 /run/containers/storage/overlay-containers/${PODMAN_ID}/userdata/hosts /etc/hosts rw - ext4 /dev/vda rw`,
].join('\n');

test("the container's ID comes from the engine's own files bound into it, never from a host's view of containers", () => {
  assert.deepEqual(ownContainerIds(DOCKER_MOUNTINFO), [DOCKER_ID]);
  assert.deepEqual(ownContainerIds(PODMAN_MOUNTINFO), [PODMAN_ID]);
  // A host's mountinfo names its containers' shm mounts and overlays (measured on a host that has /.dockerenv).
  const host = [
    '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
    `47 27 0:40 / /var/lib/containers/storage/overlay-containers/${PODMAN_ID}/userdata/shm rw - tmpfs shm rw`,
    `48 27 0:41 / /var/lib/docker/containers/${DOCKER_ID}/mounts/shm rw - tmpfs shm rw`,
    `62 45 0:41 / /var/lib/containers/storage/overlay/${'c'.repeat(64)}/merged rw - overlay overlay rw`,
  ].join('\n');
  assert.deepEqual(ownContainerIds(host), []);
});

test('mount points are read unescaped', () => {
  const points = mountPoints(DOCKER_MOUNTINFO);
  assert.ok(points.has('/data'));
  assert.ok(points.has('/srv/with space'));
  assert.ok(points.has('/etc/hostname'));
});

const CONTAINER: OwnContainer = {
  Id: PODMAN_ID,
  Mounts: [
    { Type: 'volume', Source: '/var/lib/containers/storage/volumes/hangar-data/_data', Destination: '/data' },
    { Type: 'bind', Source: '/srv/hangar/workspaces', Destination: '/data/workspaces' },
    { Type: 'bind', Source: '/home/ops/hangar.yaml', Destination: '/config/hangar.yaml' },
    { Type: 'tmpfs', Destination: '/scratch' },
  ],
  GraphDriver: { Name: 'overlay', Data: { MergedDir: '/var/lib/containers/storage/overlay/xyz/merged' } },
  HostConfig: { Tmpfs: { '/run/private': 'rw' } },
};

test("a path below a volume or a bind mount is the mount's source; the nearest mount wins", () => {
  const toHost = hostPathMapper(CONTAINER);
  assert.equal(toHost('/data'), '/var/lib/containers/storage/volumes/hangar-data/_data');
  assert.equal(toHost('/data/git-cache/x'), '/var/lib/containers/storage/volumes/hangar-data/_data/git-cache/x');
  assert.equal(toHost('/data/workspaces/run.1'), '/srv/hangar/workspaces/run.1');
  assert.equal(toHost('/config/hangar.yaml'), '/home/ops/hangar.yaml');
});

test("a path in no mount is in the container's root file system, the engine's merged view of it", () => {
  const toHost = hostPathMapper(CONTAINER);
  assert.equal(toHost('/usr/local/bin/node'), '/var/lib/containers/storage/overlay/xyz/merged/usr/local/bin/node');
  // A sibling whose name starts like a mount's is not below it.
  assert.equal(toHost('/data2/file'), '/var/lib/containers/storage/overlay/xyz/merged/data2/file');
  assert.equal(
    toHost('/config/hangar.yaml.bak'),
    '/var/lib/containers/storage/overlay/xyz/merged/config/hangar.yaml.bak',
  );
});

test('a tmpfs, or a root file system with no directory on the host, has no host path, and the error says so', () => {
  const toHost = hostPathMapper(CONTAINER);
  assert.throws(() => toHost('/scratch/sockets'), /\/scratch\/sockets is on a tmpfs of this container \(\/scratch\)/);
  assert.throws(() => toHost('/run/private/x'), /on a tmpfs of this container \(\/run\/private\)/);
  const vfs = hostPathMapper({ Id: 'x', Mounts: [], GraphDriver: { Name: 'vfs', Data: null } });
  assert.throws(
    () => vfs('/app/dist'),
    /\/app\/dist is in this container's own file system.*\(vfs\).*Mount it from the host/,
  );
});

test('a bind keeps its destination and options; only its source is translated', () => {
  const toHost = hostPathMapper(CONTAINER);
  assert.equal(hostBind('/data/workspaces/run.1:/workspace:rw', toHost), '/srv/hangar/workspaces/run.1:/workspace:rw');
  assert.equal(
    hostBind('/usr/bin/setsid:/opt/hangar/bin/setsid:ro', toHost),
    '/var/lib/containers/storage/overlay/xyz/merged/usr/bin/setsid:/opt/hangar/bin/setsid:ro',
  );
});
