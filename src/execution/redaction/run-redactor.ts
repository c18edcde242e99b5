import type { ResolvedDefinition } from '../../mcp/index.js';
import { authSecretName, isBuiltInHarness } from '../../models/index.js';
import { Redactor } from '../../platform/redaction/redactor.js';
import type { Harness } from '../harnesses/harness.js';
import type { BuiltInSetup } from '../model/built-in-setup.js';
import type { ExecutionContext } from '../run/context.js';

/** Names of environment variables that hold credentials (a command harness's `env` may also hold plain settings). */
const CREDENTIAL_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i;

/**
 * The values of the operator's that may reach any run: the provider keys set in the server's environment, and
 * every credential-named variable of a command harness's `env`.
 */
export function operatorRedactor(context: Pick<ExecutionContext, 'models' | 'harnesses'>): Redactor {
  const redactor = new Redactor().addAll(context.models?.keys ?? {});
  for (const harness of context.harnesses.values()) addHarnessCredentials(redactor, harness);
  return redactor;
}

function addHarnessCredentials(redactor: Redactor, harness: Harness): void {
  const env = (harness as { credentials?: Readonly<Record<string, string>> }).credentials ?? {};
  for (const [name, value] of Object.entries(env)) if (CREDENTIAL_NAME.test(name)) redactor.add(name, value);
}

/**
 * Adds what a built-in harness was given for one run: its model key (named after the team secret in
 * `harness_auth_secrets`, else after the operator's variable) and its registered MCP servers' secret values.
 */
export function addBuiltInSecrets(
  redactor: Redactor,
  harnessName: string,
  agentConfig: Record<string, unknown>,
  setup: BuiltInSetup | undefined,
): void {
  if (!setup) return;
  if (isBuiltInHarness(harnessName))
    redactor.add(authSecretName(harnessName, agentConfig) ?? 'MODEL_API_KEY', setup.model.apiKey);
  for (const server of Object.values(setup.mcpServers)) addMcpSecrets(redactor, server);
}

/** A registered server's values that came from team secrets, named after them (`secret_names`: key -> secret). */
function addMcpSecrets(redactor: Redactor, server: ResolvedDefinition): void {
  const names = (server as { secret_names?: Record<string, string> }).secret_names ?? {};
  const values = 'command' in server ? server.env : server.headers;
  for (const [key, secret] of Object.entries(names)) redactor.add(secret, values[key]);
}
