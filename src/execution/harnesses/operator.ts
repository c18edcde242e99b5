import type { Config } from '../../config.js';
import type { SandboxMode } from '../sandbox/types.js';
import { CommandHarness } from './command.js';
import type { Harness } from './harness.js';

/** The harnesses the operator's config file defines, ready to run in `sandbox` (a server's engine or a worker). */
export function operatorHarnesses(config: Config, sandbox: SandboxMode, hiddenPaths: string[]): Map<string, Harness> {
  const harnesses = new Map<string, Harness>();
  for (const harness of config.operator.harnesses.values()) {
    harnesses.set(harness.name, new CommandHarness(harness, { sandbox, hiddenPaths, maxOutputBytes: config.maxOutputBytes }));
  }
  return harnesses;
}
