// Issue 26 items 5 and 6, through the `hangar` CLI as a person types it: validation errors in words, enum options
// in any case, human output by default (tables with headers, "No runs match.") and --json / --output yaml for
// scripts, every runs filter, schedules update that changes only what it is given, runs watch, hangar models,
// shell completion, and an example in every --help.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import { registerClientCommands } from '../../src/cli-commands.js';
import { hangarCli } from '../support/cli.js';
import { addEnvironment, createRun, setRunColumns } from '../support/runs.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { HANGAR_FROM_SOURCES } from '../support/typescript.js';

let hangar: TestServer;
const cli = (...args: string[]) => hangarCli(args, { url: hangar.url, apiKey: hangar.apiKey });

/** Runs a verb that must succeed and returns its standard output. */
async function ok(...args: string[]): Promise<string> {
  const result = await cli(...args);
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

before(async () => {
  // API only: runs stay QUEUED until a test moves them.
  hangar = await startTestServer({}, { role: 'api' });
});
after(() => hangar.stop());

describe('validation errors in words', () => {
  test('an enum error lists the valid values, and a case slip is named', async () => {
    const response = await hangar.request('GET', '/api/v1/agent/runs?state=queued');
    assert.equal(response.status, 400);
    assert.match(response.body.detail, /^query parameter "state" must be one of QUEUED, PENDING, CLAIMED, INPROGRESS/);
    assert.match(response.body.detail, /got "queued".*did you mean QUEUED\?/);
    const order = await hangar.request('GET', '/api/v1/agent/runs?sort_order=up');
    assert.equal(order.body.detail, 'query parameter "sort_order" must be one of asc, desc (got "up")');
  });

  test('a pattern error says in words what is allowed', async () => {
    const response = await hangar.request('POST', '/api/v1/secrets', { body: { name: '1-bad', value: 'x' } });
    assert.equal(response.status, 400);
    assert.equal(
      response.body.detail,
      'field "name" must be 1-128 letters, digits, underscores, dots or dashes, starting with a letter or an underscore (got "1-bad")',
    );
    const cliError = await cli('secrets', 'set', '1-bad', '--value', 'x');
    assert.equal(cliError.code, 1);
    assert.match(cliError.stderr, /must be 1-128 letters, digits/);
    assert.doesNotMatch(cliError.stderr, /\^\[A-Za-z/);
  });

  test('the CLI takes enum values in any case, and refuses others with the list', async () => {
    const runId = await createRun(hangar, { title: 'Any case' });
    assert.match(await ok('runs', 'list', '--state', 'queued'), new RegExp(runId));
    assert.match(await ok('runs', 'list', '--state', 'Queued', '--source', 'api', '--order', 'ASC'), new RegExp(runId));
    const refused = await cli('runs', 'list', '--state', 'waiting');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /--state takes one of QUEUED, PENDING, .*; got "waiting"/);
  });

  test('hints name the CLI command, with the API route beside it', async () => {
    await ok('secrets', 'set', 'TAKEN', '--value', 'v');
    const again = await hangar.request('POST', '/api/v1/secrets', { body: { name: 'TAKEN', value: 'v' } });
    assert.match(again.body.detail, /`hangar secrets set TAKEN` \(PUT \/secrets\/TAKEN\)/);
    const hook = await cli('webhooks', 'create', '--name', 'hinted', '--secret-name', 'MISSING');
    assert.equal(hook.code, 1);
    assert.match(hook.stderr, /create it first with `hangar secrets set MISSING`/);
  });
});

describe('human output by default, --json and --output for scripts', () => {
  test('runs list is a table with headers and says when nothing matches', async () => {
    const runId = await createRun(hangar, { title: 'Tabled run', metadata: { batch: 'tabled' } });
    const table = await ok('runs', 'list', '--meta', 'batch=tabled');
    const [header, row, ...rest] = table.trimEnd().split('\n');
    assert.match(header!, /^RUN ID\s+STATE\s+UPDATED\s+RUN TIME\s+SOURCE\s+TITLE\s+DASHBOARD$/);
    assert.match(
      row!,
      new RegExp(
        `^${runId}\\s+QUEUED\\s+(just now|\\d+ s ago)\\s+-\\s+API\\s+Tabled run\\s+${hangar.url}/runs/${runId}$`,
      ),
    );
    assert.deepEqual(rest, []);
    assert.equal(await ok('runs', 'list', '--meta', 'batch=none'), 'No runs match.\n');

    const json = JSON.parse(await ok('runs', 'list', '--meta', 'batch=tabled', '--json'));
    assert.deepEqual(
      json.runs.map((run: { run_id: string }) => run.run_id),
      [runId],
    );
    const yaml = parseYaml(await ok('runs', 'list', '--meta', 'batch=tabled', '--output', 'yaml'));
    assert.equal(yaml.runs[0].run_id, runId);
    assert.equal(JSON.parse(await ok('runs', 'list', '--meta', 'batch=tabled', '-o', 'JSON')).runs.length, 1);
  });

  test('runs list passes every filter the API has', async () => {
    const early = await createRun(hangar, { title: 'Filter early', metadata: { lane: 'f' } });
    const late = await createRun(hangar, {
      title: 'Filter late',
      metadata: { lane: 'f' },
      config: { name: 'nightly' },
    });
    await setRunColumns(hangar, early, {
      state: 'FAILED',
      source: 'SCHEDULED_AGENT',
      schedule_id: 'sched-cli',
      created_at: new Date('2026-01-10T00:00:00Z'),
    });
    const ids = async (...args: string[]) =>
      JSON.parse(await ok('runs', 'list', '--meta', 'lane=f', '--json', ...args)).runs.map(
        (run: { run_id: string }) => run.run_id,
      );
    const cases: Array<[string[], string[]]> = [
      [['--state', 'failed'], [early]],
      [['--source', 'scheduled_agent', '--schedule', 'sched-cli'], [early]],
      [['--created-before', '2026-02-01'], [early]],
      [['--created-after', '1d'], [late]],
      [['--name', 'nightly'], [late]],
      [
        ['--sort', 'created_at', '--order', 'asc'],
        [early, late],
      ],
      [['--artifact-type', 'plan'], []],
    ];
    for (const [args, expected] of cases) assert.deepEqual(await ids(...args), expected, args.join(' '));
    const bad = await cli('runs', 'list', '--created-after', 'yesterday-ish');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--created-after takes a date/);
  });

  test('one run, its timeline, a cancel and a follow-up read as sentences and tables', async () => {
    const runId = await createRun(hangar, { title: 'Shown run', prompt: 'Explain the build' });
    const shown = await ok('runs', 'get', runId);
    assert.match(shown, new RegExp(`^Run: +${runId}$`, 'm'));
    assert.match(shown, /^State: +QUEUED/m);
    assert.match(shown, /^Created: +\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC \((just now|\d+ s ago)\)$/m);
    assert.match(shown, /^Prompt:\n {2}Explain the build$/m);
    assert.equal(JSON.parse(await ok('runs', 'get', runId, '--json')).run_id, runId);

    const timeline = await ok('runs', 'timeline', runId);
    assert.match(timeline.split('\n')[0]!, /^TIME\s+AFTER\s+EVENT\s+DETAIL$/);

    assert.equal(
      await ok('runs', 'followup', runId, 'Also the tests', '--mode', 'NORMAL'),
      `Sent the follow-up to run ${runId}; \`hangar runs get ${runId}\` shows its state.\n`,
    );
    assert.equal(await ok('runs', 'cancel', runId), `Cancelled run ${runId}.\n`);
    const other = await createRun(hangar);
    assert.equal(JSON.parse(await ok('runs', 'cancel', other, '--json')), other);
  });

  test('lists of every kind have headers, and empty ones say so', async () => {
    const team = await hangar.createTeamWithUser();
    const env = { url: hangar.url, apiKey: team.apiKey };
    const empty = async (...args: string[]) => {
      const result = await hangarCli(args, env);
      assert.equal(result.code, 0, result.stderr);
      return result.stdout;
    };
    assert.match(await empty('schedules', 'list'), /^No scheduled agents\./);
    assert.match(await empty('secrets', 'list'), /^No secrets\./);
    assert.match(await empty('webhooks', 'list'), /^No webhooks\./);
    assert.match(await empty('environments', 'list'), /^No environments\./);
    assert.match(await empty('agents', 'list'), /^No agents\.|^UID/);
    await ok('secrets', 'set', 'LISTED', '--value', 'v');
    assert.match((await ok('secrets', 'list')).split('\n')[0]!, /^NAME\s+CREATED\s+UPDATED$/);
    assert.match((await ok('admin', 'teams', 'list')).split('\n')[0]!, /^UID\s+NAME/);
  });

  test('hangar models shows the catalogue with cost and why a model cannot be used', async () => {
    const table = await ok('models');
    assert.match(table.split('\n')[0]!, /^MODEL ID\s+PROVIDER\s+NAME\s+COST IN \/ OUT \(per 1M tokens\)\s+USABLE$/);
    // The test server has no provider key: every built-in model says why it cannot be used.
    assert.match(table, /no: .*(ANTHROPIC_API_KEY|OPENAI_API_KEY)/);
    const json = JSON.parse(await ok('models', '--json'));
    assert.ok(json.models.length > 0);
    assert.ok(table.includes(json.models[0].id));
  });
});

describe('schedules update changes only the options given', () => {
  test('a new cron keeps the prompt, model, name and paused state', async () => {
    const created = JSON.parse(
      await ok(
        'schedules',
        'create',
        '--name',
        'Nightly',
        '--cron',
        '0 3 * * *',
        '--prompt',
        'Triage new issues',
        '--model',
        'claude-x',
        '--paused',
        '--json',
      ),
    );
    const updated = JSON.parse(await ok('schedules', 'update', created.id, '--cron', '0 6 * * 1-5', '--json'));
    assert.equal(updated.cron_schedule, '0 6 * * 1-5');
    assert.equal(updated.name, 'Nightly');
    assert.equal(updated.prompt, 'Triage new issues');
    assert.equal(updated.enabled, false);
    assert.equal(updated.agent_config.model_id, 'claude-x');
    const resumed = await ok('schedules', 'update', created.id, '--enabled', '--name', 'Mornings');
    assert.match(resumed, /^Name: +Mornings$/m);
    assert.match(resumed, /^Next run: +\d{4}-/m);
    assert.match(resumed, /^ {2}Triage new issues$/m);
  });
});

describe('runs watch', () => {
  test('redraws the table as runs change, and --until-ended stops when all have ended', async () => {
    const runId = await createRun(hangar, { title: 'Watched', metadata: { watch: 'yes' } });
    const watching = cli('runs', 'watch', '--meta', 'watch=yes', '--interval', '0.5', '--until-ended');
    // The first table shows it queued; the watch keeps going until the run ends.
    await setRunColumns(hangar, runId, { state: 'SUCCEEDED' });
    const result = await watching;
    assert.equal(result.code, 0, result.stderr);
    const tables = result.stdout.split(/^RUN ID/m).filter(Boolean);
    assert.match(tables.at(-1)!, new RegExp(`${runId}\\s+SUCCEEDED`));
  });
});

describe('completion and help', () => {
  test('the bash completion script completes verbs and options in a real bash', async () => {
    const script = await ok('completion', 'bash');
    const complete = async (...words: string[]) => {
      const { stdout } = await promisify(execFile)('bash', [
        '-c',
        `${script}\nCOMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _hangar; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ]);
      return stdout.trim().split('\n');
    };
    assert.deepEqual(await complete('hangar', 'sch'), ['schedules']);
    assert.deepEqual(await complete('hangar', 'runs', 'wa'), ['watch']);
    assert.ok((await complete('hangar', 'runs', 'list', '--state', 'queued', '--cr')).includes('--created-after'));
    for (const shell of ['zsh', 'fish']) assert.match(await ok('completion', shell), /hangar/);
    assert.notEqual((await cli('completion', 'tcsh')).code, 0);
  });

  test('values complete too: enum options and arguments from the script, run and environment IDs from the server', async () => {
    const script = await ok('completion', 'bash');
    // `hangar` on the PATH is this checkout's CLI, against the test server (what the script calls for IDs).
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'hangar-completion-'));
    fs.writeFileSync(
      path.join(bin, 'hangar'),
      `#!/bin/sh\nexec ${process.execPath} ${HANGAR_FROM_SOURCES.join(' ')} "$@"\n`,
      { mode: 0o755 },
    );
    const complete = async (...words: string[]) => {
      const { stdout } = await promisify(execFile)(
        'bash',
        [
          '-c',
          `${script}\nCOMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _hangar; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        {
          env: {
            ...process.env,
            PATH: `${bin}:${process.env.PATH}`,
            HANGAR_URL: hangar.url,
            HANGAR_API_KEY: hangar.apiKey,
          },
        },
      );
      return stdout.trim().split('\n').filter(Boolean);
    };
    try {
      assert.deepEqual(await complete('hangar', 'runs', 'list', '--state', 'qu'), ['queued']);
      assert.deepEqual(await complete('hangar', 'runs', 'list', '-o', ''), ['table', 'json', 'yaml']);
      assert.deepEqual(await complete('hangar', 'completion', 'f'), ['fish']);
      const runId = await createRun(hangar, { title: 'Completed by tab' });
      assert.ok((await complete('hangar', 'runs', 'get', '')).includes(runId));
      assert.deepEqual(await complete('hangar', 'runs', 'cancel', runId.slice(0, 12)), [runId]);
      const environmentId = await addEnvironment(hangar);
      assert.ok((await complete('hangar', 'run', 'hello', '--environment', '')).includes(environmentId));
      // Without a reachable server the IDs are simply not offered.
      assert.deepEqual(
        await promisify(execFile)('bash', [
          '-c',
          `PATH=${bin}:$PATH HANGAR_URL=http://127.0.0.1:9 hangar __complete runs`,
        ]).then((result) => result.stdout),
        '',
      );
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });

  test('every verb has examples in its --help, and --json and --output where it prints an answer', () => {
    const program = new Command('hangar');
    registerClientCommands(program);
    const leaves = (command: Command): Command[] =>
      command.commands.length === 0 ? [command] : command.commands.flatMap(leaves);
    let checked = 0;
    for (const command of leaves(program)) {
      let help = '';
      command.configureOutput({ writeOut: (text) => (help += text) });
      command.outputHelp();
      const name = command.name();
      assert.match(help, /\nExamples:\n {2}\$ \S/, `hangar ... ${name} --help has no examples`);
      if (!['worker', 'completion'].includes(name)) assert.match(help, /--output <format>/, name);
      checked++;
    }
    assert.ok(checked > 50, `only ${checked} verbs`);
  });
});
