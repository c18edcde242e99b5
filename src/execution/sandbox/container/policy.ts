import type { Config } from '../../../config.js';
import { AGENT_CLIS } from '../../harnesses/cli/index.js';
import { locateBinary } from '../../harnesses/cli/locate.js';
import type { ContainerBackendOptions } from './backend.js';
import { containerRuntimePaths } from './runtime-paths.js';

/** The container sandbox's settings from the configuration (asked by mode.ts only under HANGAR_SANDBOX=container). */
export function containerPolicy(config: Config, hiddenPaths: string[]): Omit<ContainerBackendOptions, 'user'> {
  const binaries = Object.values(AGENT_CLIS).flatMap((cli) => {
    const found = locateBinary(config.operator.builtIn[cli.name].path ?? cli.binary, process.env.PATH);
    return found ? [found] : [];
  });
  return {
    ...config.container,
    workspaceRoot: config.workspaceDir,
    runtimePaths: containerRuntimePaths({
      commands: [...config.operator.harnesses.values()].map((harness) => harness.command),
      binaries,
      hiddenPaths,
    }),
  };
}
