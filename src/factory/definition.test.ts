import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type DefinitionError, parseDefinition } from './definition.js';

/** A complete, valid definition; the invalid cases below each change or drop one file of it. */
const VALID: Record<string, string> = {
  'factory.yaml': 'name: Triage\ndescription: Issues and nightly checks\n',
  'webhooks/github.yaml': [
    'authMode: signature',
    'signatureScheme: github',
    'secretName: GITHUB_WEBHOOK_SECRET',
    'deliveryIdHeader: X-GitHub-Delivery',
    'enabled: true',
    '',
  ].join('\n'),
  'webhooks/alerts.yml': 'secretName: alerts_token\nenabled: false\n',
  'automations/triage/automation.md': [
    '---',
    'agent: triager',
    'model: claude-sonnet',
    'triggers:',
    '  - provider: webhook',
    '    event: received',
    '    filter:',
    '      webhook_ids: [wh_01HZX]',
    '      payload:',
    '        action: opened',
    '        issue: { labels: { name: [bug, crash] } }',
    '  - provider: schedule',
    '    event: cron_fired',
    '    schedule: { cron: "0 9 * * 1-5" }',
    '---',
    '',
    'Triage the issue: label it and find an owner.',
    '',
  ].join('\n'),
  'automations/triage/examples/issue.json': '{}',
  'agents/triager/agent.md': [
    '---',
    'description: Labels issues',
    'harness: claude',
    'environment: env_42',
    'worker_host: build-1',
    'skills: [labeling]',
    '---',
    'You are careful.',
    '',
  ].join('\n'),
  'skills/labeling/SKILL.md': [
    '---',
    'name: labeling',
    'description: How we label issues',
    '---',
    '# Labels',
    'Use bug for crashes.',
    '',
  ].join('\n'),
  'skills/labeling/reference.md': 'supporting material',
  'README.md': '# not part of the definition',
  '.git/HEAD': 'ref: refs/heads/main',
};

function only(files: Record<string, string>): DefinitionError {
  const { definition, errors } = parseDefinition(files);
  assert.equal(definition, null);
  assert.equal(errors.length, 1, JSON.stringify(errors, null, 2));
  return errors[0]!;
}

test('parses a complete definition into the expected structure', () => {
  const { definition, errors } = parseDefinition(VALID);
  assert.deepEqual(errors, []);
  assert.deepEqual(definition, {
    name: 'Triage',
    description: 'Issues and nightly checks',
    webhooks: [
      {
        name: 'alerts',
        file: 'webhooks/alerts.yml',
        authMode: 'token',
        signatureScheme: null,
        secretName: 'alerts_token',
        deliveryIdHeader: null,
        enabled: false,
        lines: { secretName: 1, enabled: 2 },
      },
      {
        name: 'github',
        file: 'webhooks/github.yaml',
        authMode: 'signature',
        signatureScheme: 'github',
        secretName: 'GITHUB_WEBHOOK_SECRET',
        deliveryIdHeader: 'X-GitHub-Delivery',
        enabled: true,
        lines: { authMode: 1, signatureScheme: 2, secretName: 3, deliveryIdHeader: 4, enabled: 5 },
      },
    ],
    automations: [
      {
        name: 'triage',
        file: 'automations/triage/automation.md',
        enabled: true,
        agent: 'triager',
        prompt: 'Triage the issue: label it and find an owner.',
        triggers: [
          {
            provider: 'webhook',
            event: 'received',
            filter: {
              webhook_ids: ['wh_01HZX'],
              payload: { action: 'opened', issue: { labels: { name: ['bug', 'crash'] } } },
            },
          },
          { provider: 'schedule', event: 'cron_fired', schedule: { cron: '0 9 * * 1-5' } },
        ],
        overrides: { model_id: 'claude-sonnet' },
        lines: {
          agent: 2,
          model: 3,
          triggers: 4,
          'triggers[0]': 5,
          'triggers[0].provider': 5,
          'triggers[0].event': 6,
          'triggers[0].filter': 7,
          'triggers[0].filter.webhook_ids': 8,
          'triggers[0].filter.webhook_ids[0]': 8,
          'triggers[0].filter.payload': 9,
          'triggers[0].filter.payload.action': 10,
          'triggers[0].filter.payload.issue': 11,
          'triggers[0].filter.payload.issue.labels': 11,
          'triggers[0].filter.payload.issue.labels.name': 11,
          'triggers[0].filter.payload.issue.labels.name[0]': 11,
          'triggers[0].filter.payload.issue.labels.name[1]': 11,
          'triggers[1]': 12,
          'triggers[1].provider': 12,
          'triggers[1].event': 13,
          'triggers[1].schedule': 14,
          'triggers[1].schedule.cron': 14,
        },
      },
    ],
    agents: [
      {
        name: 'triager',
        file: 'agents/triager/agent.md',
        description: 'Labels issues',
        prompt: 'You are careful.',
        model: null,
        harness: 'claude',
        environment: 'env_42',
        workerHost: 'build-1',
        runner: null,
        skills: ['labeling'],
        lines: { description: 2, harness: 3, environment: 4, worker_host: 5, skills: 6, 'skills[0]': 6 },
      },
    ],
    skills: [
      {
        name: 'labeling',
        file: 'skills/labeling/SKILL.md',
        description: 'How we label issues',
        prompt: '# Labels\nUse bug for crashes.',
      },
    ],
    runners: [],
  });
});

test('runners/<name>.yaml: the API fields; an agent names one by its file name', () => {
  const { definition, errors } = parseDefinition({
    'factory.yaml': 'name: shaped',
    'runners/pool.yaml': [
      'description: The big pool',
      'sandbox: kubernetes',
      'limits: { cpus: 2, memory: 4g, pids: 1024 }',
      'kubernetes:',
      '  runtime_class_name: gvisor',
      '  pod_template: { spec: { nodeSelector: { pool: big } } }',
    ].join('\n'),
    'agents/builder/agent.md': '---\nrunner: pool\n---\nBuild.',
  });
  assert.deepEqual(errors, []);
  const [runner] = definition!.runners;
  assert.deepEqual(
    { ...runner, lines: undefined },
    {
      name: 'pool',
      file: 'runners/pool.yaml',
      description: 'The big pool',
      sandbox: 'kubernetes',
      limits: { cpus: 2, memory: '4g', pids: 1024 },
      kubernetes: { runtime_class_name: 'gvisor', pod_template: { spec: { nodeSelector: { pool: 'big' } } } },
      lines: undefined,
    },
  );
  assert.equal(definition!.agents[0]!.runner, 'pool');
});

test('a runner file with wrong keys and types, and an agent naming a runner that is not there', () => {
  const { errors } = parseDefinition({
    'factory.yaml': 'name: shaped',
    'runners/pool.yaml': 'sandbox: vm\nlimits: { cpus: many, disk: 1g }\nkubernetes: gvisor\nsize: 3',
    'runners/Bad Name.yaml': 'description: x',
    'agents/builder/agent.md': '---\nrunner: other\n---\nBuild.',
  });
  assert.deepEqual(
    errors.map((error) => `${error.file}:${error.line}: ${error.message.split(';')[0]}`),
    [
      'agents/builder/agent.md:2: Runner "other" is not defined in this definition',
      'runners/Bad Name.yaml:null: "Bad Name" is not a valid runner name: names must match ^[a-z0-9][a-z0-9_-]{0,99}$ (lowercase letters, digits, _ and -, starting with a letter or digit, at most 100 characters)',
      'runners/pool.yaml:1: sandbox must be one of bwrap, process, container, kubernetes, not "vm".',
      'runners/pool.yaml:2: limits.cpus must be a number, not "many".',
      'runners/pool.yaml:2: Unknown key "disk" in limits',
      'runners/pool.yaml:3: kubernetes must be a mapping (runtime_class_name, pod_template), not "gvisor".',
      'runners/pool.yaml:4: Unknown key "size" in a runner file',
    ],
  );
});

test('a github trigger: the kind of GitHub App event and a payload filter', () => {
  const { definition, errors } = parseDefinition({
    'factory.yaml': 'name: Reviews',
    'automations/reviews/automation.md':
      '---\ntriggers:\n  - provider: github\n    event: review\n    filter: {payload: {pull_request: {base: {ref: [main]}}}}\n---\nAddress the review.',
  });
  assert.deepEqual(errors, []);
  assert.deepEqual(definition?.automations[0]?.triggers, [
    { provider: 'github', event: 'review', filter: { payload: { pull_request: { base: { ref: ['main'] } } } } },
  ]);
});

test('fills in defaults for everything optional', () => {
  const { definition, errors } = parseDefinition({
    'factory.yaml': 'name: Minimal',
    'webhooks/plain.yaml': 'secretName: TOKEN',
    'automations/nightly/automation.md':
      '---\ntriggers:\n  - {provider: schedule, event: cron_fired, schedule: {cron: "@daily"}}\n---\nCheck the build.',
    'agents/bare/agent.md': '---\n---\n',
  });
  assert.deepEqual(errors, []);
  assert.equal(definition?.description, null);
  assert.deepEqual(
    { ...definition?.webhooks[0], lines: undefined },
    {
      name: 'plain',
      file: 'webhooks/plain.yaml',
      authMode: 'token',
      signatureScheme: null,
      secretName: 'TOKEN',
      deliveryIdHeader: null,
      enabled: true,
      lines: undefined,
    },
  );
  const automation = definition?.automations[0];
  assert.equal(automation?.enabled, true);
  assert.equal(automation?.agent, null);
  assert.deepEqual(automation?.overrides, {});
  assert.deepEqual(definition?.agents[0], {
    name: 'bare',
    file: 'agents/bare/agent.md',
    description: null,
    prompt: '',
    model: null,
    harness: null,
    environment: null,
    workerHost: null,
    runner: null,
    skills: [],
    lines: {},
  });
  assert.deepEqual(definition?.skills, []);
});

test('reads CRLF files with a byte-order mark, keeping the lines', () => {
  const { definition, errors } = parseDefinition({
    'factory.yaml': '\uFEFFname: Windows\r\n',
    'agents/a/agent.md': '\uFEFF---\r\nmodel: m1\r\n---\r\nHello\r\n',
  });
  assert.deepEqual(errors, []);
  assert.equal(definition?.agents[0]?.model, 'm1');
  assert.equal(definition?.agents[0]?.prompt, 'Hello');
  assert.deepEqual(definition?.agents[0]?.lines, { model: 2 });
});

const AUTOMATION = 'automations/triage/automation.md';
const webhookTrigger = (filter: string) =>
  `---\ntriggers:\n  - provider: webhook\n    event: received\n    filter:\n${filter}\n---\nDo it.`;

/** Each case: files to change (undefined removes one) -> the only error expected. */
const INVALID: Array<{
  name: string;
  change: Record<string, string | undefined>;
  file: string;
  line: number | null;
  message: RegExp;
}> = [
  {
    name: 'missing factory.yaml',
    change: { 'factory.yaml': undefined },
    file: 'factory.yaml',
    line: null,
    message: /factory\.yaml is missing/,
  },
  {
    name: 'factory.yaml without a name',
    change: { 'factory.yaml': 'description: x\n' },
    file: 'factory.yaml',
    line: 1,
    message: /name is required/,
  },
  {
    name: 'YAML syntax error',
    change: { 'webhooks/alerts.yml': 'secretName: a\nenabled: [true\n' },
    file: 'webhooks/alerts.yml',
    line: 3,
    message: /YAML is not valid/,
  },
  {
    name: 'YAML syntax error in front matter',
    change: { 'agents/triager/agent.md': '---\nskills: [labeling]\nmodel: a: b\n---\n' },
    file: 'agents/triager/agent.md',
    line: 3,
    message: /YAML is not valid.*Nested mappings/,
  },
  {
    name: 'duplicate key',
    change: { 'webhooks/alerts.yml': 'secretName: a\nsecretName: b\n' },
    file: 'webhooks/alerts.yml',
    line: 2,
    message: /unique/,
  },
  {
    name: 'unknown key',
    change: { 'webhooks/alerts.yml': 'secretName: a\ncolor: red\n' },
    file: 'webhooks/alerts.yml',
    line: 2,
    message: /Unknown key "color".*expected one of authMode, signatureScheme/,
  },
  {
    name: 'key in the wrong case',
    change: { 'webhooks/alerts.yml': 'secretName: a\nauthmode: token\n' },
    file: 'webhooks/alerts.yml',
    line: 2,
    message: /did you mean "authMode"\? Keys are case-sensitive/,
  },
  {
    name: 'not a mapping',
    change: { 'webhooks/alerts.yml': '- secretName: a\n' },
    file: 'webhooks/alerts.yml',
    line: 1,
    message: /must be a mapping/,
  },
  {
    name: 'bad authMode',
    change: { 'webhooks/alerts.yml': 'secretName: a\nauthMode: basic\n' },
    file: 'webhooks/alerts.yml',
    line: 2,
    message: /authMode must be one of token, url_token, signature, not "basic"/,
  },
  {
    name: 'signature without signatureScheme',
    change: { 'webhooks/alerts.yml': 'secretName: a\nauthMode: signature\n' },
    file: 'webhooks/alerts.yml',
    line: 2,
    message: /needs a signatureScheme/,
  },
  {
    name: 'signatureScheme without signature',
    change: { 'webhooks/alerts.yml': 'secretName: a\nsignatureScheme: stripe\n' },
    file: 'webhooks/alerts.yml',
    line: 2,
    message: /applies only to authMode signature/,
  },
  {
    name: 'missing secretName',
    change: { 'webhooks/alerts.yml': '\nenabled: true\n' },
    file: 'webhooks/alerts.yml',
    line: 2,
    message: /secretName is required/,
  },
  {
    name: 'empty webhook file',
    change: { 'webhooks/alerts.yml': '' },
    file: 'webhooks/alerts.yml',
    line: null,
    message: /secretName is required/,
  },
  {
    name: 'bad secretName',
    change: { 'webhooks/alerts.yml': 'secretName: 9lives\n' },
    file: 'webhooks/alerts.yml',
    line: 1,
    message: /secretName "9lives" is not valid; expected a team secret name/,
  },
  {
    name: 'bad header name',
    change: { 'webhooks/alerts.yml': 'secretName: a\ndeliveryIdHeader: "X Delivery"\n' },
    file: 'webhooks/alerts.yml',
    line: 2,
    message: /deliveryIdHeader "X Delivery" is not valid; expected an HTTP header name/,
  },
  {
    name: 'quoted boolean',
    change: { 'webhooks/alerts.yml': 'secretName: a\nenabled: "yes"\n' },
    file: 'webhooks/alerts.yml',
    line: 2,
    message: /enabled must be true or false/,
  },
  {
    name: 'bad webhook name',
    change: { 'webhooks/alerts.yml': undefined, 'webhooks/Alerts.yml': 'secretName: a\n' },
    file: 'webhooks/Alerts.yml',
    line: null,
    message: /"Alerts" is not a valid webhook name: names must match/,
  },
  {
    name: 'bad folder name',
    change: {
      'skills/labeling/reference.md': undefined,
      'skills/Big Skill/SKILL.md': '---\nname: x\ndescription: y\n---\n',
    },
    file: 'skills/Big Skill/SKILL.md',
    line: null,
    message: /not a valid skill name/,
  },
  {
    name: 'duplicate name',
    change: { 'webhooks/github.yml': 'secretName: a\n' },
    file: 'webhooks/github.yml',
    line: null,
    message: /also defined by webhooks\/github\.yaml/,
  },
  {
    name: 'automation without front matter',
    change: { [AUTOMATION]: 'Just a prompt.' },
    file: AUTOMATION,
    line: 1,
    message: /must start with YAML front matter/,
  },
  {
    name: 'unclosed front matter',
    change: { [AUTOMATION]: '---\ntriggers: []\n' },
    file: AUTOMATION,
    line: 1,
    message: /never closed/,
  },
  {
    name: 'automation without body',
    change: {
      [AUTOMATION]:
        '---\ntriggers:\n  - {provider: schedule, event: cron_fired, schedule: {cron: "@daily"}}\n---\n\n  \n',
    },
    file: AUTOMATION,
    line: 4,
    message: /no prompt/,
  },
  {
    name: 'automation without triggers',
    change: { [AUTOMATION]: '---\nenabled: true\n---\nDo it.' },
    file: AUTOMATION,
    line: 2,
    message: /triggers is required/,
  },
  {
    name: 'automation with empty front matter',
    change: { [AUTOMATION]: '---\n---\nDo it.' },
    file: AUTOMATION,
    line: 1,
    message: /triggers is required/,
  },
  {
    name: 'empty trigger list',
    change: { [AUTOMATION]: '---\ntriggers: []\n---\nDo it.' },
    file: AUTOMATION,
    line: 2,
    message: /list of 1 to 10 triggers/,
  },
  {
    name: 'unknown provider',
    change: { [AUTOMATION]: '---\ntriggers:\n  - provider: email\n---\nDo it.' },
    file: AUTOMATION,
    line: 3,
    message: /triggers\[0\]\.provider must be "webhook", "schedule" or "github", not "email"/,
  },
  {
    name: 'a github trigger of an event GitHub triggers do not take',
    change: { [AUTOMATION]: '---\ntriggers:\n  - provider: github\n    event: push\n---\nDo it.' },
    file: AUTOMATION,
    line: 4,
    message: /triggers\[0\]\.event/,
  },
  {
    name: 'a github trigger with a filter that cannot be evaluated',
    change: {
      [AUTOMATION]:
        '---\ntriggers:\n  - provider: github\n    event: label\n    filter:\n      payload: {label: {name: []}}\n---\nDo it.',
    },
    file: AUTOMATION,
    line: 6,
    message: /triggers\[0\]\.filter/,
  },
  {
    name: 'wrong event',
    change: {
      [AUTOMATION]:
        '---\ntriggers:\n  - provider: schedule\n    event: received\n    schedule: {cron: "@daily"}\n---\nDo it.',
    },
    file: AUTOMATION,
    line: 4,
    message: /triggers\[0\]\.event must be "cron_fired", not "received"/,
  },
  {
    name: 'trigger without filter',
    change: { [AUTOMATION]: '---\ntriggers:\n  - provider: webhook\n    event: received\n---\nDo it.' },
    file: AUTOMATION,
    line: 3,
    message: /triggers\[0\] is missing filter/,
  },
  {
    name: 'unknown key in a filter',
    change: { [AUTOMATION]: webhookTrigger('      webhook_ids: [wh_1]\n      headers: {}') },
    file: AUTOMATION,
    line: 7,
    message: /triggers\[0\]\.filter has unknown key "headers"; expected only webhook_ids, payload/,
  },
  {
    name: 'empty webhook_ids',
    change: { [AUTOMATION]: webhookTrigger('      webhook_ids: []') },
    file: AUTOMATION,
    line: 6,
    message: /webhook_ids must list at least 1/,
  },
  {
    name: 'invalid payload filter',
    change: { [AUTOMATION]: webhookTrigger('      webhook_ids: [wh_1]\n      payload:\n        action: {in: opened}') },
    file: AUTOMATION,
    line: 7,
    message: /triggers\[0\]\.filter\.payload\.action: "in" must be an array/,
  },
  {
    name: 'bad cron',
    change: {
      [AUTOMATION]:
        '---\ntriggers:\n  - provider: schedule\n    event: cron_fired\n    schedule:\n      cron: "61 * * * *"\n---\nDo it.',
    },
    file: AUTOMATION,
    line: 6,
    message: /schedule\.cron is not usable \(.*minute.*\); expected 5 fields/,
  },
  {
    name: 'webhook name used as webhook_id',
    change: { [AUTOMATION]: webhookTrigger('      webhook_ids:\n        - wh_1\n        - github') },
    file: AUTOMATION,
    line: 8,
    message:
      /^webhook_ids take webhook UIDs, not names: "github" is the file name of webhooks\/github\.yaml; use the UID that apply printed for it/,
  },
  {
    name: 'unknown agent reference',
    change: { [AUTOMATION]: VALID[AUTOMATION]!.replace('agent: triager', 'agent: reviewer') },
    file: AUTOMATION,
    line: 2,
    message: /agent "reviewer" is not defined.*one of triager/,
  },
  {
    name: 'unknown automation key',
    change: { [AUTOMATION]: VALID[AUTOMATION]!.replace('model: claude-sonnet', 'model_id: claude-sonnet') },
    file: AUTOMATION,
    line: 3,
    message: /Unknown key "model_id"/,
  },
  {
    name: 'agent with unknown skill',
    change: { 'agents/triager/agent.md': '---\nskills:\n  - labeling\n  - deploying\n---\n' },
    file: 'agents/triager/agent.md',
    line: 4,
    message: /Skill "deploying" is not defined/,
  },
  {
    name: 'agent skills not a list',
    change: { 'agents/triager/agent.md': '---\nskills: labeling\n---\n' },
    file: 'agents/triager/agent.md',
    line: 2,
    message: /skills must be a list of names/,
  },
  {
    name: 'SKILL.md name mismatch',
    change: { 'skills/labeling/SKILL.md': '---\ndescription: d\nname: labels\n---\n' },
    file: 'skills/labeling/SKILL.md',
    line: 3,
    message: /name "labels" differs from its folder skills\/labeling\//,
  },
  {
    name: 'SKILL.md without description',
    change: { 'skills/labeling/SKILL.md': '---\nname: labeling\n---\n' },
    file: 'skills/labeling/SKILL.md',
    line: 2,
    message: /no description/,
  },
  {
    name: '.. path',
    change: { '../secrets.yaml': 'x' },
    file: '../secrets.yaml',
    line: null,
    message: /"\.\." segment/,
  },
  { name: 'absolute path', change: { '/etc/passwd': 'x' }, file: '/etc/passwd', line: null, message: /absolute/ },
  {
    name: 'folder without its file',
    change: { 'automations/triage/automation.md': undefined },
    file: 'automations/triage/',
    line: null,
    message: /The folder automations\/triage\/ has no automation\.md/,
  },
];

for (const { name, change, file, line, message } of INVALID) {
  test(`reports ${name}`, () => {
    const files = { ...VALID };
    for (const [path, text] of Object.entries(change)) {
      if (text === undefined) delete files[path];
      else files[path] = text;
    }
    const error = only(files);
    assert.equal(error.file, file);
    assert.equal(error.line, line);
    assert.match(error.message, message);
  });
}

test('reports every problem at once, grouped by file in line order', () => {
  const { definition, errors } = parseDefinition({
    'webhooks/a.yaml': 'authMode: basic\nenabled: yes\n',
    'webhooks/B.yaml': 'secretName: s\n',
    'automations/x/automation.md':
      '---\nagent: ghost\ntriggers:\n  - provider: schedule\n    event: cron_fired\n    schedule: {cron: "@reboot"}\n---\n',
    'agents/y/notes.md': 'no agent.md here',
  });
  assert.equal(definition, null);
  assert.deepEqual(
    errors.map((error) => [error.file, error.line]),
    [
      ['agents/y/', null],
      ['automations/x/automation.md', 2],
      ['automations/x/automation.md', 6],
      ['automations/x/automation.md', 7],
      ['factory.yaml', null],
      ['webhooks/B.yaml', null],
      ['webhooks/a.yaml', 1],
      ['webhooks/a.yaml', 1],
      ['webhooks/a.yaml', 2],
    ],
  );
  assert.match(errors[6]!.message, /authMode must be one of/);
  assert.match(errors[7]!.message, /secretName is required/);
  assert.match(errors[8]!.message, /enabled must be true or false/);
});

test('ignores files outside the definition and supporting material', () => {
  const { definition, errors } = parseDefinition({
    ...VALID,
    'webhooks/README.md': 'about our webhooks',
    'webhooks/nested/x.yaml': 'not: read',
    'automations/NOTES.md': 'loose file',
    'notes/x': 'anything',
  });
  assert.deepEqual(errors, []);
  assert.deepEqual(
    definition?.webhooks.map((webhook) => webhook.name),
    ['alerts', 'github'],
  );
});
