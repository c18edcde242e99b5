import type { Command } from 'commander';
import { collect, oneOf } from '../platform/cli/options.js';

export { type RefusalInWords, refusalLine } from './refusal-words.js';

/**
 * The network options of `hangar environments create|update`. Client side only: types from the slice, no schema
 * (a client verb loads none of the server).
 */

const PRESETS = ['npm', 'pypi', 'crates', 'go', 'maven', 'debian', 'ubuntu', 'github'];

export interface NetworkOptions {
  network?: 'off' | 'open';
  setupNetwork?: 'off' | 'open';
  agentNetwork?: 'off' | 'open';
  setupAllow: string[];
  agentAllow: string[];
  setupPreset: string[];
  agentPreset: string[];
}

export function withNetworkOptions(command: Command): Command {
  const mode = (flag: string) => oneOf(flag, ['off', 'open']);
  return command
    .option('--network <mode>', 'both phases: off or open (the internet but private addresses)', mode('--network'))
    .option('--setup-network <mode>', "setup commands' network: off or open", mode('--setup-network'))
    .option('--agent-network <mode>', "the agent's network: off or open", mode('--agent-network'))
    .option(
      '--setup-allow <host>',
      'a host setup may reach, e.g. registry.npmjs.org or *.x.com:8443 (repeatable)',
      collect,
      [],
    )
    .option('--agent-allow <host>', 'a host the agent may reach (repeatable)', collect, [])
    .option('--setup-preset <name>', `hosts of a preset for setup: ${PRESETS.join(', ')} (repeatable)`, collect, [])
    .option('--agent-preset <name>', 'hosts of a preset for the agent (repeatable)', collect, []);
}

type Phase = 'off' | 'open' | { allow: string[]; presets: string[] };

function phase(mode: 'off' | 'open' | undefined, allow: string[], presets: string[]): Phase | undefined {
  if (allow.length > 0 || presets.length > 0) return { allow, presets };
  return mode;
}

/** The request's `network`, or nothing when no network option was given (the environment keeps the default). */
export function networkBody(options: NetworkOptions): { network?: Record<string, Phase> } {
  const setup = phase(options.setupNetwork ?? options.network, options.setupAllow, options.setupPreset);
  const agent = phase(options.agentNetwork ?? options.network, options.agentAllow, options.agentPreset);
  const network = { ...(setup ? { setup } : {}), ...(agent ? { agent } : {}) };
  return Object.keys(network).length > 0 ? { network } : {};
}

/** A phase's network in a few words, for tables. */
export function networkWords(value: unknown): string {
  if (value === undefined) return 'default';
  if (typeof value === 'string') return value;
  const { allow = [], presets = [] } = value as { allow?: Array<{ host: string }>; presets?: string[] };
  return [...presets.map((name) => `@${name}`), ...allow.map((rule) => rule.host)].join(' ');
}
