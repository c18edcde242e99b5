// A test reporter, beside spec: when the suite ends, the files its time went to (the sum of each file's top-level
// tests; a file's process start and imports come on top). CI's length is mostly these.
import path from 'node:path';

export default async function* fileTimes(source) {
  const files = new Map();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (nesting !== 0 || !file) continue;
    files.set(file, (files.get(file) ?? 0) + (details.duration_ms ?? 0));
  }
  if (files.size < 2) return;
  const seconds = (ms) => (ms / 1000).toFixed(1);
  const total = [...files.values()].reduce((sum, ms) => sum + ms, 0);
  yield `\nslowest test files (${files.size} files, ${seconds(total)} s of tests in all):\n`;
  for (const [file, ms] of [...files].sort((a, b) => b[1] - a[1]).slice(0, 20))
    yield `${seconds(ms).padStart(8)} s  ${path.relative(process.cwd(), file)}\n`;
}
