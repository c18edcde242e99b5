import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

/**
 * Issue 55 items 1 and 2: the front door and the figures drift back to long pages unless something fails when they
 * do. The README stays the front door (what Hangar is, the quick start, the settings most people set, where the rest
 * lives); bench/RESULTS.md holds only each benchmark's current table (dated entries go to bench/HISTORY.md).
 */
const LIMITS: Array<{ file: string; maxBytes: number; where: string }> = [
  { file: 'README.md', maxBytes: 12 * 1024, where: 'move guarantees and tables to docs/' },
  { file: 'bench/RESULTS.md', maxBytes: 15 * 1024, where: 'move dated entries to bench/HISTORY.md' },
];

for (const { file, maxBytes, where } of LIMITS) {
  test(`${file} is under ${maxBytes / 1024} KB`, () => {
    const size = fs.statSync(file).size;
    assert.ok(size <= maxBytes, `${file} is ${(size / 1024).toFixed(1)} KB, over ${maxBytes / 1024} KB: ${where}`);
  });
}

test('every relative link of the README names a file that exists', () => {
  const readme = fs.readFileSync('README.md', 'utf8');
  const targets = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z]+:/.test(target));
  assert.ok(targets.length > 10, 'the README links its documentation');
  const missing = targets.filter((target) => !fs.existsSync(path.resolve(target)));
  assert.deepEqual(missing, []);
});
