import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clientGroup } from './auth-throttle.js';

test('clientGroup: IPv4 as it is, IPv6 by its /64 however it is written', () => {
  assert.equal(clientGroup('203.0.113.7'), '203.0.113.7');
  assert.equal(clientGroup('::ffff:203.0.113.7'), '203.0.113.7');
  const group = '2001:db8:aa:1::/64';
  for (const address of [
    '2001:db8:aa:1::1',
    '2001:db8:aa:1:ffff:ffff:ffff:ffff',
    '2001:0db8:00aa:0001:0:0:0:9',
    '2001:DB8:AA:1::2%eth0',
  ]) {
    assert.equal(clientGroup(address), group, address);
  }
  assert.notEqual(clientGroup('2001:db8:aa:2::1'), group);
  assert.equal(clientGroup('::1'), '0:0:0:0::/64');
  assert.equal(clientGroup('fe80::1'), 'fe80:0:0:0::/64');
});
