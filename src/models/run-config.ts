import type { BuiltInHarness } from './catalogue.js';

// How a run's agent config names its model and the team secret with a harness's key: read when a run is created
// (runs) and when it starts (execution).

/** The member of `harness_auth_secrets` naming the team secret with a harness's API key. */
const AUTH_SECRET_FIELD: Partial<Record<BuiltInHarness, 'claude_auth_secret_name' | 'codex_auth_secret_name'>> = {
  claude: 'claude_auth_secret_name',
  codex: 'codex_auth_secret_name',
};

interface ModelConfig {
  model_id?: string;
  harness?: { model_id?: string };
  harness_auth_secrets?: Record<string, string | undefined>;
}

/** The team secret a run of `harness` takes its key from, when its config names one. */
export function authSecretName(harness: BuiltInHarness, agentConfig: Record<string, unknown>): string | undefined {
  const field = AUTH_SECRET_FIELD[harness];
  return field ? (agentConfig as ModelConfig).harness_auth_secrets?.[field] : undefined;
}

/** The catalogue ID a run asks for (`config.harness.model_id`, else `config.model_id`). */
export function requestedModelId(agentConfig: Record<string, unknown>): string | undefined {
  const config = agentConfig as ModelConfig;
  return config.harness?.model_id ?? config.model_id;
}
