import fs from 'node:fs';
import type { Command } from 'commander';
import YAML from 'yaml';
import { say, show } from '../platform/cli/output.js';
import { table } from '../platform/cli/table.js';
import { callAndPrint, callApi, clientOptionsFromEnv } from '../platform/http/client.js';
import type { RunnerItem, RunnerList } from './schemas.js';

interface RunnerOptions {
  name: string;
  description?: string;
  sandbox?: string;
  cpus?: string;
  memory?: string;
  pids?: string;
  runtimeClass?: string;
  podTemplate?: string;
}

const path = (uid: string) => `/runners/${encodeURIComponent(uid)}`;

function number(option: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new Error(`${option} takes a number, got "${raw}"`);
  return value;
}

/** The create and replace body; the server checks kinds, maxima and runtime classes. */
function body(options: RunnerOptions) {
  const limits = {
    ...(options.cpus !== undefined ? { cpus: number('--cpus', options.cpus) } : {}),
    ...(options.memory !== undefined ? { memory: options.memory } : {}),
    ...(options.pids !== undefined ? { pids: number('--pids', options.pids) } : {}),
  };
  const kubernetes = {
    ...(options.runtimeClass !== undefined ? { runtime_class_name: options.runtimeClass } : {}),
    // YAML is a superset of JSON: either form of a pod template reads.
    ...(options.podTemplate !== undefined
      ? { pod_template: YAML.parse(fs.readFileSync(options.podTemplate, 'utf8')) as Record<string, unknown> }
      : {}),
  };
  return {
    name: options.name,
    ...(options.description !== undefined ? { description: options.description } : {}),
    ...(options.sandbox !== undefined ? { sandbox: options.sandbox } : {}),
    ...(Object.keys(limits).length > 0 ? { limits } : {}),
    ...(Object.keys(kubernetes).length > 0 ? { kubernetes } : {}),
  };
}

function shapeOptions(command: Command): Command {
  return command
    .requiredOption('--name <name>', 'name, unique in the team')
    .option('--description <text>', 'what it is for')
    .option('--sandbox <kind>', "sandbox kind: the server's own (bwrap, process, container or kubernetes)")
    .option('--cpus <n>', 'CPUs, e.g. 1.5 (at most HANGAR_RUN_CPUS_MAX)')
    .option('--memory <size>', 'memory, e.g. 512m or 4g (at most HANGAR_RUN_MEMORY_MAX)')
    .option('--pids <n>', 'processes and threads (at most HANGAR_RUN_PIDS_MAX)')
    .option('--runtime-class <name>', "Kubernetes: the pods' runtimeClassName (one the operator allows)")
    .option(
      '--pod-template <file>',
      'Kubernetes: a pod template (YAML or JSON) with placement only (spec.nodeSelector, ...)',
    );
}

const said = (value: number | string | undefined) => (value === undefined ? '-' : String(value));

/** `hangar runners ...`: the team's runners, the sandbox shapes its runs execute with (HANGAR_URL, HANGAR_API_KEY). */
export function registerRunnerCommands(program: Command): void {
  const runners = program
    .command('runners')
    .description("manage the team's runners: the sandbox kind and shape (CPU, memory, processes) runs execute with");
  runners
    .command('list')
    .description("list the team's runners and the operator's default")
    .addHelpText('after', '\nExamples:\n  $ hangar runners list --json\n')
    .action(async () => {
      const result = await callApi<RunnerList>(clientOptionsFromEnv(), 'GET', '/runners');
      show(result, ({ runners: items, default: fallback }) =>
        [
          table(
            items,
            [
              { header: 'UID', value: (item: RunnerItem) => item.uid },
              { header: 'NAME', value: (item: RunnerItem) => item.name },
              { header: 'SANDBOX', value: (item: RunnerItem) => item.sandbox ?? fallback.sandbox },
              { header: 'CPUS', value: (item: RunnerItem) => said(item.limits?.cpus) },
              { header: 'MEMORY', value: (item: RunnerItem) => said(item.limits?.memory) },
              { header: 'PIDS', value: (item: RunnerItem) => said(item.limits?.pids) },
              { header: 'RUNTIME CLASS', value: (item: RunnerItem) => said(item.kubernetes?.runtime_class_name) },
            ],
            'No runners. Define one with `hangar runners create`.',
          ),
          `Default (no runner): ${fallback.sandbox}, ${fallback.limits.cpus} CPUs, ${fallback.limits.memory}, ${fallback.limits.pids} processes; at most ${fallback.maximums.cpus} CPUs, ${fallback.maximums.memory}, ${fallback.maximums.pids} processes. A missing field takes the environment's limit, else the default.`,
        ].join('\n\n'),
      );
    });
  shapeOptions(runners.command('create').description('define a runner'))
    .addHelpText(
      'after',
      `
Examples:
  $ hangar runners create --name large --cpus 4 --memory 8g --pids 4096
  $ hangar runners create --name gvisor-pool --runtime-class gvisor --pod-template pool.yaml
Use it: \`hangar run --runner <uid>\` or config.runner_id, an agent's or an environment's default_runner_uid.
`,
    )
    .action((options: RunnerOptions) => callAndPrint('POST', '/runners', body(options)));
  runners
    .command('get')
    .description('show one runner')
    .argument('<uid>')
    .action((uid: string) => callAndPrint('GET', path(uid)));
  shapeOptions(
    runners
      .command('update')
      .description('replace a runner (every field: what is left out is cleared); runs already created keep theirs')
      .argument('<uid>'),
  ).action((uid: string, options: RunnerOptions) => callAndPrint('PUT', path(uid), body(options)));
  runners
    .command('delete')
    .description('delete a runner')
    .argument('<uid>')
    .action(async (uid: string) => {
      await callApi(clientOptionsFromEnv(), 'DELETE', path(uid));
      say(`Deleted runner ${uid}.`);
    });
}
