import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluatePayloadFilter, payloadFilterProblem } from './filter.js';

/** A filter of `depth` nested objects (the top level is depth 1) with one condition at the bottom. */
function nested(depth: number): Record<string, unknown> {
  let filter: Record<string, unknown> = { leaf: 1 };
  for (let level = 1; level < depth; level++) filter = { a: filter };
  return filter;
}

/** A flat filter of `count` equality conditions. */
function leaves(count: number): Record<string, unknown> {
  return Object.fromEntries(Array.from({ length: count }, (_, index) => [`k${index}`, index]));
}

const values = (count: number) => Array.from({ length: count }, (_, index) => `v${index}`);

const pr = {
  action: 'opened',
  number: 7,
  draft: false,
  label: null,
  pull_request: { merged: true, base: { ref: 'main' } },
};

const cases: Array<[name: string, filter: unknown, payload: unknown, matched: boolean]> = [
  // no conditions
  ['empty filter matches an object', {}, pr, true],
  ['empty filter matches a scalar payload', {}, 42, true],
  ['empty filter matches null', {}, null, true],
  // equality and any-of
  ['equal string', { action: 'opened' }, pr, true],
  ['unequal string', { action: 'closed' }, pr, false],
  ['equality is case-sensitive', { action: 'Opened' }, pr, false],
  ['equal number', { number: 7 }, pr, true],
  ['equal boolean', { draft: false }, pr, true],
  ['equal null', { label: null }, pr, true],
  ['null does not equal a missing key', { nothing: null }, pr, false],
  ['null does not equal false', { draft: null }, pr, false],
  ['bare scalar on a missing key', { nothing: 'x' }, pr, false],
  ['bare array, one matches', { action: ['opened', 'edited'] }, pr, true],
  ['bare array, none matches', { action: ['closed', 'edited'] }, pr, false],
  ['bare array on a missing key', { nothing: ['a'] }, pr, false],
  ['all keys must match (AND)', { action: 'opened', number: 8 }, pr, false],
  ['all keys match', { action: 'opened', number: 7, draft: false }, pr, true],
  // type-strict comparison
  ['1 equals 1.0', { n: 1.0 }, { n: 1 }, true],
  ['1.0 in a set equals 1', { n: { in: [1.0] } }, JSON.parse('{"n": 1.0}'), true],
  ['"1" does not equal 1', { n: '1' }, { n: 1 }, false],
  ['1 does not equal "1"', { n: 1 }, { n: '1' }, false],
  ['true does not equal "true"', { flag: true }, { flag: 'true' }, false],
  ['"true" does not equal true', { flag: 'true' }, { flag: true }, false],
  ['0 does not equal false', { n: 0 }, { n: false }, false],
  ['"" does not equal null', { s: '' }, { s: null }, false],
  ['null equals only null', { s: null }, { s: 'null' }, false],
  // in
  ['in, present and listed', { action: { in: ['opened', 'edited'] } }, pr, true],
  ['in, present but not listed', { action: { in: ['closed'] } }, pr, false],
  ['in, missing key', { nothing: { in: ['a'] } }, pr, false],
  ['in, null value listed', { label: { in: [null, 'bug'] } }, pr, true],
  ['in, null value not listed', { label: { in: ['bug'] } }, pr, false],
  ['in against an object value', { pull_request: { in: ['x'] } }, pr, false],
  // not_in
  ['not_in, present and not listed', { action: { not_in: ['closed'] } }, pr, true],
  ['not_in, present and listed', { action: { not_in: ['opened'] } }, pr, false],
  ['not_in, missing key passes', { nothing: { not_in: ['a'] } }, pr, true],
  ['not_in, null value listed', { label: { not_in: [null] } }, pr, false],
  ['not_in, null value not listed', { label: { not_in: ['bug'] } }, pr, true],
  ['not_in is type-strict', { number: { not_in: ['7'] } }, pr, true],
  // exists
  ['exists true, present', { action: { exists: true } }, pr, true],
  ['exists true, present with null', { label: { exists: true } }, pr, true],
  ['exists true, missing', { nothing: { exists: true } }, pr, false],
  ['exists false, missing', { nothing: { exists: false } }, pr, true],
  ['exists false, present', { action: { exists: false } }, pr, false],
  ['exists false, present with null', { label: { exists: false } }, pr, false],
  // several operators on one field
  ['in and not_in both satisfied', { action: { in: ['opened', 'edited'], not_in: ['closed'] } }, pr, true],
  ['in satisfied, not_in violated', { tags: { in: ['a'], not_in: ['b'] } }, { tags: ['a', 'b'] }, false],
  ['exists true and not_in, present', { action: { exists: true, not_in: ['closed'] } }, pr, true],
  ['exists true and not_in, missing', { nothing: { exists: true, not_in: ['closed'] } }, pr, false],
  ['exists false and not_in, missing', { nothing: { exists: false, not_in: ['x'] } }, pr, true],
  // nested objects
  ['nested object matches', { pull_request: { merged: true, base: { ref: 'main' } } }, pr, true],
  ['nested object, deep value differs', { pull_request: { base: { ref: 'dev' } } }, pr, false],
  ['nested object, missing parent', { issue: { number: 7 } }, pr, false],
  ['nested object, missing leaf', { pull_request: { title: 'x' } }, pr, false],
  [
    'nested not_in under a missing parent still requires the parent',
    { issue: { state: { not_in: ['x'] } } },
    pr,
    false,
  ],
  ['nested object, parent is a string', { action: { name: 'x' } }, pr, false],
  ['nested object, parent is null', { label: { name: { exists: false } } }, pr, false],
  ['nested exists false under a present parent', { pull_request: { closed_at: { exists: false } } }, pr, true],
  ['empty nested object requires an object', { pull_request: {} }, pr, true],
  ['empty nested object on a missing key', { issue: {} }, pr, false],
  ['empty nested object on a scalar', { action: {} }, pr, false],
  // non-object payloads: every key is missing
  ['scalar payload, in fails', { action: 'opened' }, 'opened', false],
  ['null payload, exists false passes', { action: { exists: false } }, null, true],
  ['scalar payload, not_in passes', { action: { not_in: ['x'] } }, 3, true],
  // arrays of objects
  [
    'array of objects, second element matches',
    { commits: { author: 'bob' } },
    { commits: [{ author: 'amy' }, { author: 'bob' }] },
    true,
  ],
  [
    'array of objects, no element matches',
    { commits: { author: 'cid' } },
    { commits: [{ author: 'amy' }, { author: 'bob' }] },
    false,
  ],
  [
    'array of objects, conditions must hold in one element',
    { commits: { author: 'amy', id: 2 } },
    {
      commits: [
        { author: 'amy', id: 1 },
        { author: 'bob', id: 2 },
      ],
    },
    false,
  ],
  ['array of objects, empty array', { commits: { author: 'amy' } }, { commits: [] }, false],
  [
    'array of objects, scalar elements skipped',
    { commits: { author: 'amy' } },
    { commits: [1, { author: 'amy' }] },
    true,
  ],
  [
    'array of objects, scalar elements never match',
    { commits: { author: { exists: false } } },
    { commits: [1, 'x', { author: 'amy' }] },
    false,
  ],
  [
    'array of objects, nested array inside',
    { commits: { files: { path: 'a.ts' } } },
    { commits: [{ files: [{ path: 'b.ts' }] }, { files: [{ path: 'a.ts' }] }] },
    true,
  ],
  ['nested object against an array of scalars', { labels: { name: 'bug' } }, { labels: ['bug'] }, false],
  ['top-level array payload, any element', { action: 'opened' }, [{ action: 'closed' }, { action: 'opened' }], true],
  ['top-level array payload, no element', { action: 'merged' }, [{ action: 'closed' }, { action: 'opened' }], false],
  // arrays of scalars
  ['bare scalar, array contains it', { labels: 'bug' }, { labels: ['bug', 'ui'] }, true],
  ['bare scalar, array lacks it', { labels: 'docs' }, { labels: ['bug', 'ui'] }, false],
  ['bare array, overlap', { labels: ['docs', 'ui'] }, { labels: ['bug', 'ui'] }, true],
  ['in, overlap', { labels: { in: ['docs', 'bug'] } }, { labels: ['bug', 'ui'] }, true],
  ['in, no overlap', { labels: { in: ['docs'] } }, { labels: ['bug', 'ui'] }, false],
  ['in, empty payload array', { labels: { in: ['docs'] } }, { labels: [] }, false],
  ['not_in, overlap', { labels: { not_in: ['wip', 'ui'] } }, { labels: ['bug', 'ui'] }, false],
  ['not_in, no overlap', { labels: { not_in: ['wip'] } }, { labels: ['bug', 'ui'] }, true],
  ['not_in, empty payload array', { labels: { not_in: ['wip'] } }, { labels: [] }, true],
  ['array elements compare type-strictly', { ids: 1 }, { ids: ['1', true] }, false],
  ['array elements: 1 equals 1.0', { ids: { in: [2.0] } }, { ids: [1, 2] }, true],
  // keys that exist on Object.prototype are not payload fields
  ['inherited key is missing', { constructor: { exists: false }, toString: { exists: false } }, {}, true],
  ['own key named like a prototype key', { constructor: 'x' }, { constructor: 'x' }, true],
];

test('evaluates filters against payloads', () => {
  for (const [name, filter, payload, matched] of cases) {
    assert.equal(payloadFilterProblem(filter), null, `${name}: filter should be valid`);
    const verdict = evaluatePayloadFilter(filter, payload);
    assert.equal(verdict.matched, matched, `${name}: ${verdict.reason}`);
    assert.ok(verdict.reason.length > 0, name);
  }
});

const invalid: Array<[name: string, filter: unknown, problem: RegExp]> = [
  ['array filter', [], /^payload: .*JSON object.*array/],
  ['string filter', 'opened', /^payload: .*JSON object/],
  ['number filter', 1, /^payload: .*JSON object/],
  ['null filter', null, /^payload: .*JSON object.*null/],
  ['undefined filter', undefined, /^payload: .*JSON object/],
  ['depth 11', nested(11), /^payload(\.a){10}: .*deeper than 10/],
  ['65 leaves', leaves(65), /^payload: .*more than 64 conditions/],
  ['65 leaves spread over nested objects', { a: leaves(40), b: { c: leaves(25) } }, /more than 64 conditions/],
  ['empty bare array', { action: [] }, /^payload\.action: .*empty/],
  ['empty in', { action: { in: [] } }, /^payload\.action: "in" is empty/],
  ['empty not_in', { action: { not_in: [] } }, /^payload\.action: "not_in" is empty/],
  ['33 values in a bare array', { action: values(33) }, /^payload\.action: .*33 values.*limit is 32/],
  ['33 values in in', { action: { in: values(33) } }, /^payload\.action: "in" has 33 values/],
  ['33 values in not_in', { action: { not_in: values(33) } }, /^payload\.action: "not_in" has 33 values/],
  ['object inside a bare array', { action: ['a', { b: 1 }] }, /^payload\.action: .*only contain.*\{"b":1\}/],
  ['array inside in', { action: { in: [['a']] } }, /^payload\.action: "in" may only contain/],
  ['object inside not_in', { action: { not_in: [{}] } }, /^payload\.action: "not_in" may only contain/],
  ['hole inside in', { action: { in: new Array(2) } }, /^payload\.action: "in" may only contain/],
  ['NaN inside in', { n: { in: [Number.NaN] } }, /^payload\.n: "in" may only contain/],
  ['exists is a string', { action: { exists: 'yes' } }, /^payload\.action: "exists" must be true or false, not "yes"/],
  ['exists is null', { action: { exists: null } }, /^payload\.action: "exists" must be true or false/],
  ['in is a string', { action: { in: 'opened' } }, /^payload\.action: "in" must be an array/],
  ['not_in is an object', { action: { not_in: { a: 1 } } }, /^payload\.action: "not_in" must be an array/],
  [
    'same value in in and not_in',
    { action: { in: ['opened', 'edited'], not_in: ['opened'] } },
    /^payload\.action: "in" and "not_in" both list "opened"/,
  ],
  ['null in in and not_in', { action: { in: [null], not_in: [null] } }, /both list null/],
  [
    'exists false with in',
    { action: { exists: false, in: ['opened'] } },
    /^payload\.action: "exists": false contradicts "in"/,
  ],
  [
    'operator mixed with a field key',
    { pull_request: { in: ['x'], merged: true } },
    /^payload\.pull_request: mixes operators \(in\) with field keys \(merged\)/,
  ],
  [
    'nested problem names the full path',
    { repository: { owner: { login: { in: 5 } } } },
    /^payload\.repository\.owner\.login: "in" must be an array/,
  ],
  ['odd keys are quoted in paths', { 'x-hook': { 'a b': [] } }, /^payload\["x-hook"\]\["a b"\]: /],
  ['undefined condition', { action: undefined }, /^payload\.action: a condition must be/],
  ['Infinity condition', { n: Number.POSITIVE_INFINITY }, /^payload\.n: a condition must be/],
];

test('explains what is wrong with an invalid filter', () => {
  for (const [name, filter, problem] of invalid) {
    const message = payloadFilterProblem(filter);
    assert.ok(message !== null, `${name}: should be rejected`);
    assert.match(message, problem, name);
  }
});

test('accepts filters exactly at the limits', () => {
  assert.equal(payloadFilterProblem(nested(10)), null, 'depth 10');
  assert.equal(payloadFilterProblem(leaves(64)), null, '64 leaves');
  assert.equal(payloadFilterProblem({ a: leaves(40), b: { c: leaves(24) } }), null, '64 leaves over nested objects');
  assert.equal(payloadFilterProblem({ action: values(32) }), null, '32 values in a bare array');
  assert.equal(payloadFilterProblem({ action: { in: values(32), not_in: ['x'] } }), null, '32 values in in');
  assert.equal(payloadFilterProblem({ action: { not_in: values(32) } }), null, '32 values in not_in');
  // Operator objects are conditions, not levels: ten nested objects may still end in one.
  let deep: Record<string, unknown> = { leaf: { in: [1], exists: true } };
  for (let level = 1; level < 10; level++) deep = { a: deep };
  assert.equal(payloadFilterProblem(deep), null, 'depth 10 ending in an operator object');
});

test('an invalid filter never matches and never throws', () => {
  for (const [name, filter] of invalid) {
    const verdict = evaluatePayloadFilter(filter, { action: 'opened' });
    assert.equal(verdict.matched, false, name);
    assert.match(verdict.reason, /^invalid filter: payload/, name);
  }
  // Nothing in the filter walk may recurse without bound, even on a cyclic object.
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  assert.equal(evaluatePayloadFilter(cyclic, {}).matched, false);
});

test('a cyclic or BigInt payload does not break the reason', () => {
  const payload: Record<string, unknown> = { n: 1n };
  payload.self = payload;
  assert.deepEqual(evaluatePayloadFilter({ self: 'x' }, payload), {
    matched: false,
    reason: 'payload.self is an object, not "x"',
  });
  assert.equal(evaluatePayloadFilter({ n: 1 }, payload).matched, false, 'a BigInt is not a JSON number');
});

test('reasons name the first failing condition by its path', () => {
  const reason = (filter: unknown, payload: unknown) => evaluatePayloadFilter(filter, payload).reason;
  assert.equal(reason({}, pr), 'no payload conditions');
  assert.equal(reason({ action: 'opened' }, pr), 'every condition matched');
  assert.equal(
    reason({ action: ['opened', 'edited'] }, { action: 'closed' }),
    'payload.action is "closed", not one of ["opened","edited"]',
  );
  assert.equal(reason({ action: 'opened' }, { action: 'closed' }), 'payload.action is "closed", not "opened"');
  assert.equal(
    reason({ pull_request: { merged: true } }, { pull_request: {} }),
    'payload.pull_request.merged is missing',
  );
  assert.equal(reason({ pull_request: { merged: true } }, {}), 'payload.pull_request is missing');
  assert.equal(reason({ action: 'opened', number: 8 }, pr), 'payload.number is 7, not 8');
  assert.equal(reason({ action: { not_in: ['opened'] } }, pr), 'payload.action is "opened", which "not_in" excludes');
  assert.equal(reason({ action: { exists: false } }, pr), 'payload.action is present ("opened") but must not exist');
  assert.equal(reason({ nothing: { exists: true } }, pr), 'payload.nothing is missing');
  assert.equal(
    reason({ action: { name: 'x' } }, pr),
    'payload.action is "opened", not an object or an array of objects',
  );
  assert.equal(
    reason({ labels: { in: ['docs'] } }, { labels: ['bug'] }),
    'payload.labels is ["bug"], which contains none of ["docs"]',
  );
  assert.equal(
    reason({ labels: { not_in: ['bug'] } }, { labels: ['bug'] }),
    'payload.labels is ["bug"], which contains excluded "bug"',
  );
  assert.equal(
    reason(
      { repository: { commits: { author: { name: 'amy' } } } },
      { repository: { commits: [{ author: { name: 'bob' } }, { id: 1 }] } },
    ),
    'no element of payload.repository.commits matches (first: payload.repository.commits[0].author.name is "bob", not "amy")',
  );
  assert.equal(reason({ 'x-id': 1 }, {}), 'payload["x-id"] is missing');
  assert.match(reason({ action: 'opened' }, { action: 'x'.repeat(200) }), /^payload\.action is "x+…, not "opened"$/);
});
