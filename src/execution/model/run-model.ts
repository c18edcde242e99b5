import {
  authSecretName,
  type BuiltInHarness,
  type ModelCatalogue,
  ModelConfigurationError,
  type ResolvedModel,
  requestedModelId,
  resolveModel,
} from '../../models/index.js';
import { HarnessStartError } from '../harnesses/harness.js';

/**
 * The model a run of a built-in harness calls, with its endpoint and key: the one it names or the harness's
 * default, its key from the team secret in `harness_auth_secrets`, else the operator's (the catalogue's keys).
 * Anything that stops it (unknown, disabled, wrong provider, no key) is a HarnessStartError the run fails with.
 */
export async function resolveRunModel(
  catalogue: ModelCatalogue,
  harness: BuiltInHarness,
  agentConfig: Record<string, unknown>,
  readSecret: (name: string) => Promise<string | undefined>,
): Promise<ResolvedModel> {
  const requested = requestedModelId(agentConfig);
  const model = requested !== undefined ? catalogue.find(requested) : catalogue.defaultFor(harness);
  if (!model) {
    throw requested !== undefined
      ? new HarnessStartError(`Model ${requested} is not in this server's catalogue`, 'invalid_request')
      : new HarnessStartError(
          `No model in this server's catalogue works with the ${harness} harness`,
          'integration_not_configured',
        );
  }
  const secretName = authSecretName(harness, agentConfig);
  const key = secretName === undefined ? undefined : await readSecret(secretName);
  if (secretName !== undefined && !key) {
    throw new HarnessStartError(
      `The team secret ${secretName}, named in harness_auth_secrets, does not exist or is empty`,
      'integration_not_configured',
    );
  }
  const refusal = catalogue.refusal(model.id, harness, key !== undefined);
  if (refusal) throw new HarnessStartError(refusal.detail, refusal.code);
  try {
    return resolveModel(model, catalogue.keys, key);
  } catch (error) {
    if (error instanceof ModelConfigurationError)
      throw new HarnessStartError(error.message, 'integration_not_configured');
    throw error;
  }
}
