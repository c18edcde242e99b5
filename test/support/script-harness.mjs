// A command harness for tests: it reads the task from stdin and follows a script given as the prompt, a JSON
// array of steps, writing the Hangar event protocol on stdout. Plain Node, so it runs inside the sandbox.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';

const lines = readline.createInterface({ input: process.stdin });
const iterator = lines[Symbol.asyncIterator]();
const task = JSON.parse((await iterator.next()).value);
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let steps;
try {
  // SCRIPT_STEPS (the harness's env in the operator file) is for runs whose prompt Hangar writes, like judges.
  steps = JSON.parse(process.env.SCRIPT_STEPS ?? (task.kind === 'debug' ? '[{"say":"debugging"}]' : task.prompt));
} catch {
  steps = [{ say: `echo: ${task.prompt}` }];
}
if (!Array.isArray(steps)) steps = [steps];

for (const step of steps) {
  if (step.say !== undefined) emit({ type: 'text', text: step.say });
  if (step.task)
    emit({
      type: 'text',
      text: JSON.stringify({
        followups: task.followups,
        history: task.history.length,
        kind: task.kind,
        env: {
          run: process.env.HANGAR_RUN_ID,
          token: Boolean(process.env.HANGAR_TASK_TOKEN),
          secret: process.env.HANGAR_TEST_SECRET ?? null,
        },
      }),
    });
  if (step.tool) {
    emit({ type: 'tool_call', id: 't1', name: 'bash', input: { command: step.tool } });
    emit({ type: 'tool_result', id: 't1', status: 'completed', output: 'ok' });
  }
  if (step.usage) emit({ type: 'usage', input_tokens: 10, output_tokens: 5, inference_cost: 0.01 });
  if (step.artifact)
    emit({
      type: 'artifact',
      artifact_type: 'PULL_REQUEST',
      data: { url: 'https://example.invalid/pr/1', branch: 'fix' },
    });
  if (step.ls !== undefined) emit({ type: 'text', text: JSON.stringify(fs.readdirSync(step.ls).sort()) });
  if (step.cat !== undefined) emit({ type: 'text', text: fs.readFileSync(step.cat, 'utf8') });
  if (step.write !== undefined) {
    // Try to write outside the workspace; report what happened.
    try {
      fs.writeFileSync(step.write, 'x');
      emit({ type: 'text', text: `wrote ${step.write}` });
    } catch (error) {
      emit({ type: 'text', text: `cannot write ${step.write}: ${error.code}` });
    }
  }
  if (step.raw !== undefined) process.stdout.write(`${step.raw}\n`);
  // A shell command in the workspace; its output (stdout and stderr) as a text event.
  if (step.sh !== undefined) {
    const result = spawnSync('sh', ['-c', step.sh], { encoding: 'utf8' });
    emit({ type: 'text', text: `${result.stdout}${result.stderr}` });
  }
  if (step.stderr !== undefined) process.stderr.write(`${step.stderr}\n`);
  // A file in the workspace (base64 content for binary files).
  if (step.file)
    fs.writeFileSync(step.file.path, step.file.base64 ? Buffer.from(step.file.base64, 'base64') : step.file.content);
  if (step.emit) emit(step.emit);
  if (step.token) emit({ type: 'text', text: `token:${process.env.HANGAR_TASK_TOKEN}` });
  if (step.prompt) emit({ type: 'text', text: task.prompt });
  if (step.sleep) await sleep(step.sleep);
  if (step.sleepers) {
    // Grandchildren that only a process-group (or namespace) kill reaches.
    spawn('sh', ['-c', `sleep 300 # ${step.sleepers}`], { stdio: 'ignore' });
    spawn('sh', ['-c', `sleep 301 # ${step.sleepers}`], { stdio: 'ignore', detached: false });
    emit({ type: 'text', text: 'sleepers started' });
  }
  if (step.listen) {
    // Echo follow-ups given while running until one says "bye".
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      const message = JSON.parse(next.value);
      emit({ type: 'text', text: `heard: ${message.text}` });
      if (message.text === 'bye') break;
    }
  }
  if (step.ask) emit({ type: 'ask_user', question: step.ask });
  if (step.fail) emit({ type: 'failed', message: step.fail });
  if (step.done !== undefined) emit({ type: 'done', summary: step.done });
  if (step.exit !== undefined) process.exit(step.exit);
}
process.exit(0);
