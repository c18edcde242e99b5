// A test reporter that prints the test files that took longest: the sum of each file's top-level test durations
// (its imports and process start are not counted). The suite's CI budget is tight: this says where the time goes
// without a second run. It prints on the run's own plan (its last event without a file), and synchronously:
// --test-force-exit ends the process before a reporter's stream is drained.
import fs from 'node:fs';

export default async function* fileTimes(source) {
  const seconds = new Map();
  let printed = false;
  for await (const event of source) {
    const { file, nesting, details } = event.data ?? {};
    if ((event.type === 'test:pass' || event.type === 'test:fail') && file && nesting === 0) {
      seconds.set(file, (seconds.get(file) ?? 0) + (details?.duration_ms ?? 0) / 1000);
    } else if (event.type === 'test:plan' && !file && nesting === 0 && !printed) {
      printed = true;
      fs.writeSync(1, summary(seconds));
    }
  }
  if (!printed) yield summary(seconds);
}

function summary(seconds) {
  const slowest = [...seconds.entries()]
    .map(([file, total]) => ({ file: file.replace(`${process.cwd()}/`, ''), total }))
    .sort((a, b) => b.total - a.total)
    .slice(0, 25);
  const lines = slowest.map(({ file, total }) => `${total.toFixed(1).padStart(7)}  ${file}\n`).join('');
  return `\nslowest test files (seconds of their top-level tests):\n${lines}`;
}
