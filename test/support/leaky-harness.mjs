// A command harness for the redaction tests: it prints every value it was given (the variables named in
// LEAK_NAMES) every way a run's output is stored: text events whole and split in two, plain lines whole and split,
// progress, a PLAN, a text file artifact, a harness-support report, stderr and the failure message; with
// LEAK_IN_URL, also in the path of a request to the server.
import fs from 'node:fs';
import readline from 'node:readline';

const lines = readline.createInterface({ input: process.stdin });
await lines[Symbol.asyncIterator]().next();
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const raw = (line) => process.stdout.write(`${line}\n`);

const names = (process.env.LEAK_NAMES ?? '').split(',').filter(Boolean);
const given = names.map((name) => [name, process.env[name] ?? '']);
for (const [name, value] of given) {
  const half = Math.floor(value.length / 2);
  emit({ type: 'text', text: `${name} is ${value} (whole).` });
  emit({ type: 'text', text: `${name} split: ${value.slice(0, half)}` });
  emit({ type: 'text', text: `${value.slice(half)} (end of split)` });
  raw(`plain ${name}=${value}`);
  raw(`plain split ${value.slice(0, half)}`);
  raw(`${value.slice(half)} plain end`);
  emit({ type: 'progress', message: `working with ${value}` });
  emit({ type: 'artifact', artifact_type: 'PLAN', data: { title: `plan ${name}`, content: `# Plan\nuse ${value}\n` } });
  fs.writeFileSync(`leak-${name}.txt`, `the value is ${value}\n`);
  emit({ type: 'artifact', artifact_type: 'FILE', data: { path: `leak-${name}.txt` } });
  const report = await fetch(`${process.env.HANGAR_API_URL}/harness-support/report-artifact`, {
    method: 'POST',
    headers: { authorization: `Bearer ${process.env.HANGAR_TASK_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      artifact_type: 'PLAN',
      data: { title: `reported ${name}`, content: `over HTTP: ${value}` },
    }),
  });
  emit({ type: 'text', text: `report: ${report.status}` });
  // In a request's path, which the server's request log line shows (LEAK_IN_URL: the log redaction test).
  if (process.env.LEAK_IN_URL) {
    const answer = await fetch(`${process.env.HANGAR_API_URL}/harness-support/leak/${encodeURIComponent(value)}`);
    emit({ type: 'text', text: `leaked in a URL: ${answer.status}` });
  }
}
// The boundary of a split: 3 characters on the first line (too short to be told from ordinary text: kept), the
// rest on the next (replaced).
const boundary = process.env[process.env.LEAK_BOUNDARY ?? ''];
if (boundary) {
  raw(`boundary ${boundary.slice(0, 3)}`);
  raw(`${boundary.slice(3)} after`);
}
process.stderr.write(`stderr: ${given.map(([, value]) => value).join(' ')}\n`);
emit({ type: 'failed', message: `gave up holding ${given.map(([, value]) => value).join(', ')}` });
