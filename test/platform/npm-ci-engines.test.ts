// Issue 48 item 4.11: `npm ci` on the Node running the suite (20 here, 24 in CI's other pass) warns no EBADENGINE,
// as the README says. npm itself is asked: a dry run of `npm ci` from this package.json and lockfile, in a scratch
// directory so that the checkout's node_modules is left alone.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);

test(`npm ci on Node ${process.versions.node} warns no EBADENGINE`, async (t) => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-npm-ci-'));
  t.after(() => fs.rmSync(directory, { recursive: true, force: true }));
  for (const file of ['package.json', 'package-lock.json']) fs.copyFileSync(file, path.join(directory, file));
  const { stdout, stderr } = await run('npm', ['ci', '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: directory,
    maxBuffer: 64 * 1024 * 1024,
  });
  const output = `${stdout}\n${stderr}`;
  assert.match(output, /added \d+ packages/, output.slice(-2000));
  const warnings = output.split('\n').filter((line) => line.includes('EBADENGINE'));
  assert.deepEqual(warnings, [], output.slice(output.indexOf('EBADENGINE') - 200, output.indexOf('EBADENGINE') + 800));
});
