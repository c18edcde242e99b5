#!/usr/bin/env node
// The smallest useful command harness: it reads the task (one JSON line on stdin), answers with the prompt and
// the files it sees in the workspace, and ends the run. Copy it as the start of a wrapper around a real agent.
import fs from 'node:fs';
import readline from 'node:readline';

const input = readline.createInterface({ input: process.stdin });
const [first] = await input[Symbol.asyncIterator]().next().then((next) => [next.value]);
const task = JSON.parse(first);
const emit = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

emit({ type: 'text', text: `You asked: ${task.prompt}` });
for (const followup of task.followups) emit({ type: 'text', text: `And then: ${followup}` });
emit({ type: 'tool_call', id: 'ls', name: 'list_files', category: 'files', input: { path: '.' } });
emit({ type: 'tool_result', id: 'ls', status: 'completed', output: fs.readdirSync('.').filter((name) => !name.startsWith('.')) });
emit({ type: 'done', summary: 'Echoed the prompt' });
input.close();
