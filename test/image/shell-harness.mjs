// The container-sandbox check's command harness, mounted into Hangar's container at /config/shell-harness.mjs: it
// runs the task's prompt with /bin/sh (in the run's container, from the environment's image), passes each line of
// its output on as a text event, and exits with the command's exit code.
import { spawn } from 'node:child_process';
import readline from 'node:readline';

const lines = readline.createInterface({ input: process.stdin });
const task = JSON.parse((await lines[Symbol.asyncIterator]().next()).value);
const child = spawn('/bin/sh', ['-c', task.prompt], { stdio: ['ignore', 'pipe', 'inherit'] });
readline
  .createInterface({ input: child.stdout })
  .on('line', (line) => process.stdout.write(`${JSON.stringify({ type: 'text', text: line })}\n`));
child.on('close', (code) => {
  if (code === 0) process.stdout.write(`${JSON.stringify({ type: 'done', summary: 'Ran the prompt' })}\n`);
  process.exit(code ?? 1);
});
