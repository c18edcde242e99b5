import fs from 'node:fs';
import type { Command } from 'commander';
import { callApi, clientOptionsFromEnv, printJson as print } from '../platform/http/client.js';
import type { ScheduleItem } from './schemas.js';

const path = (id: string, action = '') => `/agent/schedules/${encodeURIComponent(id)}${action}`;

interface ScheduleOptions {
  name: string;
  cron: string;
  prompt?: string;
  promptFile?: string;
  paused?: boolean;
  model?: string;
  agent?: string;
}

function body(options: ScheduleOptions) {
  const prompt = options.promptFile ? fs.readFileSync(options.promptFile, 'utf8') : options.prompt;
  if (!prompt) throw new Error('give --prompt or --prompt-file');
  return {
    name: options.name,
    cron_schedule: options.cron,
    prompt,
    enabled: !options.paused,
    ...(options.model ? { agent_config: { model_id: options.model } } : {}),
    ...(options.agent ? { agent_uid: options.agent } : {}),
  };
}

function withScheduleOptions(command: Command): Command {
  return command
    .requiredOption('--name <name>', 'name of the scheduled agent')
    .requiredOption('--cron <expression>', 'cron expression in UTC, e.g. "0 9 * * 1-5" or @daily')
    .option('--prompt <text>', 'what the agent should do on each run')
    .option('--prompt-file <path>', 'read the prompt from a file')
    .option('--model <model_id>', 'model to use')
    .option('--agent <agent_uid>', 'agent identity that executes the runs')
    .option('--paused', 'save it paused');
}

/** `hangar schedules ...`: scheduled agents from the command line (HANGAR_URL, HANGAR_API_KEY). */
export function registerScheduleCommands(program: Command): void {
  const schedules = program.command('schedules').description('manage scheduled agents');
  schedules
    .command('list')
    .description('list scheduled agents with their next run')
    .option('--json', 'print the raw response')
    .action(async (options: { json?: boolean }) => {
      const result = await callApi<{ schedules: ScheduleItem[] }>(clientOptionsFromEnv(), 'GET', '/agent/schedules');
      if (options.json) return print(result);
      for (const item of result.schedules) {
        const next = item.enabled ? `next ${item.history.next_run}` : 'paused';
        process.stdout.write(
          `${item.id}  ${item.cron_schedule.padEnd(15)}  ${next}  ${item.name}${item.last_spawn_error ? `  (last error: ${item.last_spawn_error})` : ''}\n`,
        );
      }
    });
  withScheduleOptions(schedules.command('create').description('create a scheduled agent')).action(
    async (options: ScheduleOptions) =>
      print(await callApi(clientOptionsFromEnv(), 'POST', '/agent/schedules', body(options))),
  );
  withScheduleOptions(schedules.command('update').description('replace a scheduled agent').argument('<id>')).action(
    async (id: string, options: ScheduleOptions) =>
      print(await callApi(clientOptionsFromEnv(), 'PUT', path(id), body(options))),
  );
  for (const [verb, description, method, action] of [
    ['get', 'show one scheduled agent', 'GET', ''],
    ['pause', 'stop starting runs until resumed', 'POST', '/pause'],
    ['resume', 'start runs again from the next tick', 'POST', '/resume'],
    ['delete', 'delete a scheduled agent (its past runs stay)', 'DELETE', ''],
  ] as const) {
    schedules
      .command(verb)
      .description(description)
      .argument('<id>')
      .action(async (id: string) => print(await callApi(clientOptionsFromEnv(), method, path(id, action))));
  }
}
