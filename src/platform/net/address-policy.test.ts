import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AddressPolicy, parseAllowedHosts } from './address-policy.js';

test('only public unicast addresses pass by default, in IPv4, IPv6 and IPv4-mapped form', () => {
  const policy = new AddressPolicy();
  for (const ip of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888']) assert.equal(policy.refusalOf(ip), undefined, ip);
  const refused: Array<[string, RegExp]> = [
    ['127.0.0.1', /loopback/],
    ['127.255.0.9', /loopback/],
    ['::1', /loopback/],
    ['::ffff:127.0.0.1', /127\.0\.0\.1 is a loopback/],
    ['::ffff:7f00:1', /loopback/],
    ['10.1.2.3', /private/],
    ['172.31.0.1', /private/],
    ['192.168.0.1', /private/],
    ['::ffff:192.168.0.1', /private/],
    ['100.64.0.1', /carrierGradeNat/],
    ['169.254.169.254', /linkLocal/],
    ['fe80::1', /linkLocal/],
    ['fd12::1', /uniqueLocal/],
    ['0.0.0.0', /unspecified/],
    ['::', /unspecified/],
    ['224.0.0.1', /multicast/],
    ['255.255.255.255', /broadcast/],
    ['64:ff9b::a00:1', /rfc6052/],
    ['2002:a00:1::', /6to4/],
  ];
  for (const [ip, reason] of refused) assert.match(policy.refusalOf(ip) ?? 'passed', reason, ip);
});

test('the operator allows ranges, single addresses and host names', () => {
  const policy = new AddressPolicy(parseAllowedHosts(' 10.20.0.0/16, [::1], mcp.internal ,127.0.0.1'));
  assert.equal(policy.refusalOf('10.20.5.5'), undefined);
  assert.match(policy.refusalOf('10.21.0.1') ?? '', /private/);
  assert.equal(policy.refusalOf('::1'), undefined);
  assert.equal(
    policy.refusalOf('::ffff:127.0.0.1'),
    undefined,
    'the mapped form of an allowed address is that address',
  );
  assert.match(policy.refusalOf('127.0.0.2') ?? '', /loopback/);
  assert.ok(policy.allowsName('MCP.internal.'));
  assert.ok(!policy.allowsName('other.internal'));
  assert.throws(() => parseAllowedHosts('10.0.0.0/33'), /neither/);
  assert.throws(() => parseAllowedHosts('http://x'), /neither/);
});

test('URLs: every spelling of loopback is refused before anything connects', async () => {
  const policy = new AddressPolicy();
  for (const url of [
    'http://0x7f000001/',
    'http://2130706433/',
    'http://0177.0.0.1/',
    'http://127.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://localhost/',
    'http://LOCALHOST./',
  ]) {
    assert.match((await policy.refusalOfUrl(url)) ?? 'passed', /loopback/, url);
  }
  assert.match((await policy.refusalOfUrl('file:///etc/passwd')) ?? '', /http or https/);
  assert.match((await policy.refusalOfUrl('not a url')) ?? '', /not a valid URL/);
  assert.equal(await policy.refusalOfUrl('https://93.184.215.14/mcp'), undefined);
});
