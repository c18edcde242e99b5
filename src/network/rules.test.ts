import assert from 'node:assert/strict';
import { test } from 'node:test';
import { allowLineFor, allows, effectiveNetwork, hostMatches, normalizeNetwork, storedNetwork } from './rules.js';

test('network: true and false are open and off for both phases', () => {
  assert.deepEqual(normalizeNetwork(true), { network: { setup: 'open', agent: 'open' } });
  assert.deepEqual(normalizeNetwork(false), { network: { setup: 'off', agent: 'off' } });
});

test('allow entries are put in one shape: lower case, ports listed, methods upper case', () => {
  const result = normalizeNetwork({
    setup: { presets: ['npm'] },
    agent: {
      allow: [
        'Registry.NPMJS.org',
        '*.githubusercontent.com',
        'example.com:8443',
        { host: 'api.x.io', methods: ['get'] },
      ],
    },
  });
  assert.deepEqual(result, {
    network: {
      setup: { allow: [], presets: ['npm'] },
      agent: {
        allow: [
          { host: 'registry.npmjs.org', ports: [80, 443] },
          { host: '*.githubusercontent.com', ports: [80, 443] },
          { host: 'example.com', ports: [8443] },
          { host: 'api.x.io', ports: [80, 443], methods: ['GET'] },
        ],
      },
    },
  });
});

test('bad entries are refused naming the entry', () => {
  const problem = (body: Parameters<typeof normalizeNetwork>[0]) => {
    const result = normalizeNetwork(body);
    return 'problem' in result ? result.problem : undefined;
  };
  assert.match(
    problem({ agent: { allow: ['a.*.com'] } })!,
    /network\.agent\.allow\[0\] "a\.\*\.com" may hold a wildcard only/,
  );
  assert.match(problem({ agent: { allow: ['*'] } })!, /wildcard only as its first label/);
  assert.match(problem({ agent: { allow: ['bad_name.com'] } })!, /not a host name/);
  assert.match(problem({ setup: { allow: ['10.0.0.1'] } })!, /network\.setup\.allow\[0\] "10\.0\.0\.1" is an address/);
  assert.match(problem({ agent: { allow: ['x.com:70000'] } })!, /port outside/);
  assert.match(problem({ agent: { allow: [{ host: 'x.com', methods: ['BREW'] }] } })!, /method "BREW"/);
  assert.match(problem({ agent: {} })!, /lists no host and no preset/);
});

test('the operator is the default and the ceiling', () => {
  assert.deepEqual(effectiveNetwork(undefined, true), { kind: 'open' });
  assert.deepEqual(effectiveNetwork(undefined, false), { kind: 'off' });
  assert.deepEqual(effectiveNetwork('open', false), { kind: 'off' });
  assert.deepEqual(effectiveNetwork({ allow: [{ host: 'a.com', ports: [443] }] }, false), { kind: 'off' });
  const allowed = effectiveNetwork({ allow: [{ host: 'a.com', ports: [443] }], presets: ['pypi'] }, true);
  assert.equal(allowed.kind, 'allow');
  assert.ok(allowed.kind === 'allow' && allowed.rules.some((rule) => rule.host === 'files.pythonhosted.org'));
});

test('wildcards cover subdomains only; ports and methods restrict', () => {
  assert.ok(hostMatches('*.example.com', 'a.example.com'));
  assert.ok(hostMatches('*.example.com', 'a.b.example.com'));
  assert.ok(!hostMatches('*.example.com', 'example.com'));
  assert.ok(!hostMatches('*.example.com', 'badexample.com'));
  assert.ok(hostMatches('example.com', 'EXAMPLE.com.'));
  const rules = [
    { host: 'a.com', ports: [80, 443] },
    { host: 'b.com', ports: [80, 443], methods: ['GET'] },
  ];
  assert.ok(allows(rules, 'a.com', 443, 'CONNECT'));
  assert.ok(!allows(rules, 'a.com', 22, 'CONNECT'));
  assert.ok(allows(rules, 'b.com', 80, 'GET'));
  assert.ok(!allows(rules, 'b.com', 80, 'POST'));
  assert.ok(!allows(rules, 'b.com', 443, 'CONNECT'));
});

test('the line that allows a refused host', () => {
  assert.equal(allowLineFor('pastebin.com', 443), 'pastebin.com');
  assert.equal(allowLineFor('pastebin.com', 8080), 'pastebin.com:8080');
});

test('stored networks read back what parses and leave the rest out', () => {
  assert.deepEqual(storedNetwork({ setup: 'open', agent: { allow: [{ host: 'a.com', ports: [443] }] } }), {
    setup: 'open',
    agent: { allow: [{ host: 'a.com', ports: [443] }] },
  });
  assert.equal(storedNetwork({ setup: 'nonsense' }), undefined);
  assert.equal(storedNetwork(undefined), undefined);
});

test('docs/environments.md lists every preset with its hosts', async () => {
  const { readFileSync } = await import('node:fs');
  const { NETWORK_PRESETS } = await import('./presets.js');
  const docs = readFileSync(new URL('../../docs/environments.md', import.meta.url), 'utf8');
  for (const [name, hosts] of Object.entries(NETWORK_PRESETS)) {
    const row = docs.split('\n').find((line) => line.startsWith(`| \`${name}\` |`));
    assert.ok(row, `no row for the preset ${name}`);
    assert.deepEqual(
      row
        .split('|')[2]!
        .split(',')
        .map((host) => host.trim()),
      [...hosts],
      name,
    );
  }
});
