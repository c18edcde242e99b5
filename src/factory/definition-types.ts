import type { Trigger } from '../automations/index.js';
import type { SignatureSchemeName } from '../webhooks/index.js';

/** The parsed shapes of a factory definition, shared by the parsers of its files and the plan/apply service. */

export interface DefinitionError {
  file: string;
  line: number | null;
  message: string;
}

/** Where each key was written, for errors found later (e.g. a secret that does not exist): key path -> 1-based line. */
export type KeyLines = Record<string, number>;

export interface WebhookDefinition {
  name: string;
  file: string;
  authMode: 'token' | 'url_token' | 'signature';
  signatureScheme: SignatureSchemeName | null;
  secretName: string;
  deliveryIdHeader: string | null;
  enabled: boolean;
  lines: KeyLines;
}

export interface AutomationDefinition {
  name: string;
  file: string;
  enabled: boolean;
  agent: string | null;
  prompt: string;
  triggers: Trigger[];
  overrides: { model_id?: string; harness?: string; environment_id?: string };
  lines: KeyLines;
}

export interface AgentDefinition {
  name: string;
  file: string;
  description: string | null;
  prompt: string;
  model: string | null;
  harness: string | null;
  environment: string | null;
  workerHost: string | null;
  /** The name of a runner of the definition (runners/<name>.yaml): the agent's default_runner_uid. */
  runner: string | null;
  skills: string[];
  lines: KeyLines;
}

export interface RunnerDefinition {
  name: string;
  file: string;
  description: string | null;
  sandbox: string | null;
  limits: Record<string, unknown> | null;
  kubernetes: Record<string, unknown> | null;
  lines: KeyLines;
}

export interface SkillDefinition {
  name: string;
  file: string;
  description: string;
  prompt: string;
}

export interface FactoryDefinition {
  name: string;
  description: string | null;
  webhooks: WebhookDefinition[];
  automations: AutomationDefinition[];
  agents: AgentDefinition[];
  skills: SkillDefinition[];
  runners: RunnerDefinition[];
}

/** What the other files of the definition define, for checking references. */
export interface References {
  /** Webhook name -> its file, to catch names written where UIDs belong. */
  webhooks: ReadonlyMap<string, string>;
  agents: ReadonlySet<string>;
  skills: ReadonlySet<string>;
  runners: ReadonlySet<string>;
}
