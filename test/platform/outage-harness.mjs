// A command harness for the database outage tests: it says it is running, waits until the test drops a file named
// `release` into its workspace (the test stops the database first), then writes its output and ends, so the
// engine writes the transcript and the end while the database is down.
import fs from 'node:fs';
import readline from 'node:readline';

const lines = readline.createInterface({ input: process.stdin });
await lines[Symbol.asyncIterator]().next();
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
emit({ type: 'text', text: 'waiting for the outage' });
// A file the test writes from another process: no event tells of it here.
while (!fs.existsSync('release')) await new Promise((resolve) => setTimeout(resolve, 20));
for (let line = 1; line <= 20; line++) emit({ type: 'text', text: `line ${line} written during the outage` });
emit({
  type: 'artifact',
  artifact_type: 'PULL_REQUEST',
  data: { url: 'https://example.invalid/pr/23', branch: 'outage' },
});
emit({ type: 'progress', message: 'almost done' });
emit({ type: 'done', summary: 'finished while the database was down' });
process.exit(0);
