import type { Config } from '../../config.js';
import { AddressPolicy } from '../../platform/net/address-policy.js';
import type { SandboxMode } from '../sandbox/backend.js';
import { AGENT_CLIS, CliHarness } from './cli/index.js';
import { CommandHarness } from './command.js';
import type { Harness } from './harness.js';
import { OzHarness } from './oz/harness.js';

/**
 * Every harness a server's engine or a worker can run in `sandbox`: the built-in oz agent, the coding-agent CLIs
 * (a run fails with the reason when its CLI is not installed), and the operator's command harnesses.
 */
export function configuredHarnesses(
  config: Config,
  sandbox: SandboxMode,
  hiddenPaths: string[],
  /** CLIs get the server's credential proxies (a server's engine) rather than the keys (a self-hosted worker's own). */
  proxyCredentials = false,
): Map<string, Harness> {
  const harnesses = new Map<string, Harness>();
  const oz = config.operator.builtIn.oz;
  harnesses.set(
    'oz',
    new OzHarness({
      sandbox,
      hiddenPaths,
      network: oz.network,
      addressPolicy: new AddressPolicy(config.mcpAllowedHosts),
      timeoutMinutes: oz.timeoutMinutes,
      maxSteps: oz.maxSteps,
    }),
  );
  for (const cli of Object.values(AGENT_CLIS)) {
    const settings = config.operator.builtIn[cli.name];
    harnesses.set(
      cli.name,
      new CliHarness(cli, {
        sandbox,
        hiddenPaths,
        maxOutputBytes: config.maxOutputBytes,
        timeoutMs: settings.timeoutMinutes * 60_000,
        proxyCredentials,
        ...(settings.path ? { binaryPath: settings.path } : {}),
      }),
    );
  }
  for (const harness of config.operator.harnesses.values()) {
    harnesses.set(
      harness.name,
      new CommandHarness(harness, { sandbox, hiddenPaths, maxOutputBytes: config.maxOutputBytes }),
    );
  }
  return harnesses;
}
