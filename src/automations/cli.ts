import fs from 'node:fs';
import type { Command } from 'commander';
import { GITHUB_EVENT_KINDS } from '../github/cli.js';
import { say, show } from '../platform/cli/output.js';
import { table } from '../platform/cli/table.js';
import { callAndPrint, callApi, clientOptionsFromEnv } from '../platform/http/client.js';
import type { AutomationFiring, AutomationItem } from './schemas.js';

const path = (id: string) => `/factory/automations/${encodeURIComponent(id)}`;

interface AutomationOptions {
  name?: string;
  prompt?: string;
  promptFile?: string;
  webhook?: string[];
  github?: string[];
  filter?: string;
  cron?: string[];
  agent?: string;
  model?: string;
  harness?: string;
  environment?: string;
  disabled?: boolean;
  factory?: string;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${what} is not valid JSON`);
  }
}

function triggers(options: AutomationOptions) {
  const list: unknown[] = [];
  if (options.webhook?.length && options.github?.length && options.filter !== undefined)
    throw new Error('--filter applies to one kind of trigger: give it with --webhook or with --github, not both');
  const payload = options.filter === undefined ? undefined : parseJson(options.filter, '--filter');
  if (options.webhook?.length) {
    list.push({
      provider: 'webhook',
      event: 'received',
      filter: { webhook_ids: options.webhook, ...(payload === undefined ? {} : { payload }) },
    });
  }
  for (const event of options.github ?? []) {
    if (!(GITHUB_EVENT_KINDS as readonly string[]).includes(event))
      throw new Error(`--github takes ${GITHUB_EVENT_KINDS.join(', ')}, not ${JSON.stringify(event)}`);
    list.push({ provider: 'github', event, ...(payload === undefined ? {} : { filter: { payload } }) });
  }
  if (!options.webhook?.length && !options.github?.length && options.filter !== undefined)
    throw new Error('--filter applies to the triggers given with --webhook or --github');
  for (const cron of options.cron ?? []) list.push({ provider: 'schedule', event: 'cron_fired', schedule: { cron } });
  return list;
}

function body(options: AutomationOptions, creating: boolean) {
  const prompt = options.promptFile ? fs.readFileSync(options.promptFile, 'utf8') : options.prompt;
  const chosen = triggers(options);
  if (creating && prompt === undefined) throw new Error('give --prompt or --prompt-file');
  if (creating && chosen.length === 0)
    throw new Error('give at least one --webhook <uid>, --github <event> or --cron <expression>');
  const config = {
    ...(options.model ? { model_id: options.model } : {}),
    ...(options.harness ? { harness: { type: options.harness } } : {}),
    ...(options.environment ? { environment_id: options.environment } : {}),
  };
  return {
    ...(options.name !== undefined ? { name: options.name } : {}),
    ...(prompt !== undefined ? { prompt } : {}),
    ...(chosen.length > 0 ? { triggers: chosen } : {}),
    ...(options.agent !== undefined ? { agent_uid: options.agent } : {}),
    ...(Object.keys(config).length > 0 ? { agent_config: config } : {}),
    ...(options.disabled ? { enabled: false } : {}),
    ...(options.factory !== undefined ? { factory_uid: options.factory } : {}),
  };
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function withAutomationOptions(command: Command): Command {
  return command
    .option('--prompt <text>', 'what the agent does with each delivery or tick')
    .option('--prompt-file <path>', 'read the prompt from a file')
    .option('--webhook <uid>', 'start on deliveries to this webhook (repeatable; UIDs, not names)', collect)
    .option(
      '--github <event>',
      `start on the GitHub App's deliveries: ${GITHUB_EVENT_KINDS.join(', ')} (repeatable; docs/github.md)`,
      collect,
    )
    .option('--filter <json>', 'payload filter for the --webhook or --github triggers, e.g. \'{"action":["opened"]}\'')
    .option('--cron <expression>', 'also start on this cron schedule, in UTC (repeatable)', collect)
    .option('--agent <uid>', 'agent identity that executes the runs')
    .option('--model <model_id>', 'model override')
    .option('--harness <type>', 'harness override')
    .option('--environment <id>', 'environment override');
}

/** `hangar automations ...`: automations started by webhook deliveries or cron (HANGAR_URL, HANGAR_API_KEY). */
export function registerAutomationCommands(program: Command): void {
  const automations = program
    .command('automations')
    .description('manage automations: prompts that webhook deliveries or cron start');
  automations
    .command('list')
    .description('list automations')
    .addHelpText('after', '\nExamples:\n  $ hangar automations list\n')
    .action(async () => {
      const result = await callApi<{ automations: AutomationItem[] }>(
        clientOptionsFromEnv(),
        'GET',
        '/factory/automations',
      );
      show(result, ({ automations }) =>
        table(
          automations,
          [
            { header: 'ID', value: (item) => item.id },
            { header: 'NAME', value: (item) => item.name },
            { header: 'ENABLED', value: (item) => (item.enabled ? 'yes' : 'no') },
            {
              header: 'TRIGGERS',
              value: (item) =>
                item.triggers.map((trigger) => {
                  const { provider, event } = trigger as { provider: string; event: string };
                  return provider === 'github' ? `github:${event}` : provider === 'webhook' ? 'webhook' : 'cron';
                }),
            },
            {
              header: 'NOTE',
              value: (item) => {
                const gone = item.webhooks.filter((webhook) => webhook.state === 'deleted').length;
                return gone ? `${gone} selected webhook(s) deleted` : '';
              },
            },
          ],
          'No automations. Create one with `hangar automations create`.',
        ),
      );
    });
  withAutomationOptions(
    automations.command('create').description('create an automation').requiredOption('--name <name>'),
  )
    .option('--disabled', 'create it disabled')
    .option('--factory <uid>', "factory (default: the team's default factory)")
    .addHelpText(
      'after',
      `
Examples:
  $ hangar automations create --name triage --prompt "Label the issue." --webhook <uid> --filter '{"action": ["opened"]}'
  $ hangar automations create --name nightly --prompt-file nightly.md --cron "0 3 * * *"
  $ hangar automations create --name reviews --prompt "Address the review." --github review --filter '{"repository": {"name": ["api"]}}'
`,
    )
    .action((options: AutomationOptions) => callAndPrint('POST', '/factory/automations', body(options, true)));
  withAutomationOptions(
    automations
      .command('update')
      .description('change an automation; given triggers replace all of them')
      .argument('<id>')
      .option('--name <name>'),
  ).action((id: string, options: AutomationOptions) => callAndPrint('PUT', path(id), body(options, false)));
  for (const [verb, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    automations
      .command(verb)
      .description(enabled ? 'start runs again' : 'stop starting runs until enabled again')
      .argument('<id>')
      .action((id: string) => callAndPrint('PUT', path(id), { enabled }));
  }
  automations
    .command('get')
    .description('show one automation')
    .argument('<id>')
    .action((id: string) => callAndPrint('GET', path(id)));
  automations
    .command('history')
    .description('the deliveries (webhook or GitHub) that fired an automation and the runs they started')
    .argument('<id>')
    .addHelpText('after', '\nExamples:\n  $ hangar automations history <id>\n')
    .action(async (id: string) => {
      const result = await callApi<{ firings: AutomationFiring[] }>(
        clientOptionsFromEnv(),
        'GET',
        `${path(id)}/firings`,
      );
      show(result, ({ firings }) =>
        table(
          firings,
          [
            { header: 'FIRED', value: (firing) => firing.fired_at },
            {
              header: 'FROM',
              value: (firing) => (firing.source === 'github' ? `github:${firing.github_event}` : 'webhook'),
            },
            { header: 'DELIVERY', value: (firing) => firing.delivery_id ?? '' },
            { header: 'RUN', value: (firing) => firing.run_id ?? `not started: ${firing.error}` },
          ],
          'This automation has not fired yet.',
        ),
      );
    });
  automations
    .command('delete')
    .description('delete an automation (runs it started stay)')
    .argument('<id>')
    .action(async (id: string) => {
      await callApi(clientOptionsFromEnv(), 'DELETE', path(id));
      say(`Deleted automation ${id}.`);
    });
  automations
    .command('test-filter')
    .description('would a filter, or a saved automation, start a run for a stored delivery?')
    .requiredOption('--webhook <uid>', 'the webhook the delivery came to')
    .requiredOption('--delivery <delivery_id>', 'a delivery from its log')
    .option('--filter <json>', 'payload filter to try')
    .option('--automation <id>', "try a saved automation's triggers instead")
    .action((options: { webhook: string; delivery: string; filter?: string; automation?: string }) =>
      callAndPrint('POST', '/factory/automations/test-filter', {
        webhook_uid: options.webhook,
        delivery_id: options.delivery,
        ...(options.automation !== undefined ? { automation_id: options.automation } : {}),
        ...(options.automation === undefined
          ? {
              filter: {
                webhook_ids: [options.webhook],
                ...(options.filter !== undefined ? { payload: parseJson(options.filter, '--filter') } : {}),
              },
            }
          : {}),
      }),
    );
}
