import type { AgentCli } from './agent-cli.js';
import { claude } from './claude.js';
import { codex } from './codex.js';
import { gemini } from './gemini.js';

export type { ResolvedModel } from '../../../models/index.js';
export type { AgentCli, CliInvocation, CliInvocationInput } from './agent-cli.js';
export { CliHarness, type CliHarnessOptions } from './cli-harness.js';
export { locateBinary } from './locate.js';

/** The coding-agent CLIs Hangar can run as harnesses, by harness name. */
export const AGENT_CLIS: Readonly<Record<AgentCli['name'], AgentCli>> = { claude, codex, gemini };
