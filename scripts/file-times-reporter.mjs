// A test reporter that prints the test files that took longest (wall time from a file's first event to its last).
// The suite's CI budget is tight: this says where the time goes without a second run. It prints on the run's own
// plan (the last event without a file), and synchronously: --test-force-exit ends the process before a reporter's
// stream is drained.
import fs from 'node:fs';

export default async function* fileTimes(source) {
  const spans = new Map();
  let printed = false;
  for await (const event of source) {
    const file = event.data?.file;
    if (file) {
      const now = Date.now();
      const span = spans.get(file);
      if (span) span.last = now;
      else spans.set(file, { first: now, last: now });
    } else if (event.type === 'test:plan' && event.data?.nesting === 0 && !printed) {
      printed = true;
      fs.writeSync(1, summary(spans));
    }
  }
  if (!printed) yield summary(spans);
}

function summary(spans) {
  const slowest = [...spans.entries()]
    .map(([file, span]) => ({ file: file.replace(`${process.cwd()}/`, ''), seconds: (span.last - span.first) / 1000 }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, 25);
  return `\nslowest test files (wall seconds, first to last event):\n${slowest
    .map(({ file, seconds }) => `${seconds.toFixed(1).padStart(7)}  ${file}\n`)
    .join('')}`;
}
