import type { Config } from '../../config.js';
import type { SandboxMode } from '../sandbox/types.js';
import { CommandHarness } from './command.js';
import type { Harness } from './harness.js';
import { OzHarness } from './oz/harness.js';

/**
 * Every harness a server's engine or a worker can run in `sandbox`: the built-in oz agent, and the operator's
 * command harnesses from the config file.
 */
export function configuredHarnesses(
  config: Config,
  sandbox: SandboxMode,
  hiddenPaths: string[],
  price?: (modelId: string, inputTokens: number, outputTokens: number) => number | undefined,
): Map<string, Harness> {
  const harnesses = new Map<string, Harness>();
  const oz = config.operator.builtIn.oz;
  harnesses.set('oz', new OzHarness({ sandbox, hiddenPaths, network: oz.network, timeoutMinutes: oz.timeoutMinutes, maxSteps: oz.maxSteps, ...(price ? { price } : {}) }));
  for (const harness of config.operator.harnesses.values()) {
    harnesses.set(harness.name, new CommandHarness(harness, { sandbox, hiddenPaths, maxOutputBytes: config.maxOutputBytes }));
  }
  return harnesses;
}
