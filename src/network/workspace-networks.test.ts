import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type SpawnNetwork, setWorkspaceNetwork, withWorkspaceNetwork } from './workspace-networks.js';

interface Spawn {
  cwd: string;
  allowNetwork: boolean;
  argv: string[];
  egress?: SpawnNetwork['egress'];
}

const spawn = (cwd: string, allowNetwork: boolean): Spawn => ({ cwd, allowNetwork, argv: ['true'] });

test("a workspace's network applies to its processes and their subdirectories, and only narrows the caller's", () => {
  const egress = { proxyPort: 4000, dnsPort: 4001 };
  setWorkspaceNetwork('/w/run-1.1', { allowNetwork: true, egress });
  try {
    assert.deepEqual(withWorkspaceNetwork(spawn('/w/run-1.1', true)), { ...spawn('/w/run-1.1', true), egress });
    assert.deepEqual(withWorkspaceNetwork(spawn('/w/run-1.1/repo/src', true)).egress, egress);
    // The operator closed it (a harness without network, Hangar's own git): it stays closed, no proxy either.
    assert.deepEqual(withWorkspaceNetwork(spawn('/w/run-1.1', false)), spawn('/w/run-1.1', false));
    // Another workspace, or one a prefix of the name only, keeps what its caller asked.
    assert.deepEqual(withWorkspaceNetwork(spawn('/w/run-1.10', true)), spawn('/w/run-1.10', true));
    setWorkspaceNetwork('/w/run-1.1', { allowNetwork: false });
    assert.deepEqual(withWorkspaceNetwork(spawn('/w/run-1.1', true)), spawn('/w/run-1.1', false));
    // A caller's own egress never survives a phase that is off.
    assert.equal(withWorkspaceNetwork({ ...spawn('/w/run-1.1', true), egress }).egress, undefined);
  } finally {
    setWorkspaceNetwork('/w/run-1.1', undefined);
  }
  assert.deepEqual(withWorkspaceNetwork(spawn('/w/run-1.1', true)), spawn('/w/run-1.1', true));
});
