import type { Command } from 'commander';
import { show } from '../platform/cli/output.js';
import { ApiProblem, fetchApi, jsonOf } from '../platform/http/api-fetch.js';
import { callApi, clientOptionsFromEnv } from '../platform/http/client.js';
import type { InstanceStatus } from './status.js';
import { formatStatus } from './status-text.js';

/** How long the server at HANGAR_URL may take to answer before this shell's settings are checked instead. */
const PROBE_TIMEOUT_MS = 10_000;

/** What `hangar doctor` checked: the server at HANGAR_URL, or this shell's environment (what `serve` would read). */
type Checked = InstanceStatus & { checked: 'server' | 'this shell'; url?: string };

/**
 * `hangar doctor`: the instance's summary and checks (issue 26). A server answering at HANGAR_URL is checked (its
 * `GET /admin/status`), since that is what runs the runs: a second shell's environment (no HANGAR_CONFIG, no model
 * key) says nothing about it (issue 48). With no server there, or one that refuses this key, the checks are of
 * this shell's environment, and say so. `--remote` only asks the server, `--local` only reads this shell. Exits 1
 * when a check fails.
 */
export function registerDoctorCommand(program: Command): void {
  program
    .command('doctor')
    .description(
      "check the Hangar setup: the server at HANGAR_URL when one answers, else this shell's settings (sandbox, harnesses, model keys, workspace directory, git host); exit 1 if a check fails",
    )
    .option('--remote', "only the server at HANGAR_URL (GET /admin/status, an administrator's API key)")
    .option('--local', "only this shell's settings (the environment `hangar serve` would start with here)")
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar doctor                                          # the running server, or this shell\n  $ HANGAR_CONFIG=examples/hangar.yaml hangar doctor --local\n  $ hangar doctor --remote --json\n',
    )
    .action(async (options: { remote?: boolean; local?: boolean }) => {
      if (options.remote && options.local) throw new Error('--remote and --local exclude each other');
      let status: Checked;
      let note = '';
      if (options.remote) {
        const client = clientOptionsFromEnv();
        status = {
          checked: 'server',
          url: client.baseUrl,
          ...(await callApi<InstanceStatus>(client, 'GET', '/admin/status')),
        };
      } else {
        const asked = options.local ? undefined : await askServer();
        if (asked?.status) status = { checked: 'server', url: asked.url, ...asked.status };
        else {
          note = asked?.why ?? '';
          status = { checked: 'this shell', ...(await localStatus()) };
        }
      }
      show(status, (answer) => {
        const head =
          answer.checked === 'server'
            ? `Hangar at ${answer.url} (the server's own checks; \`hangar doctor --local\` checks this shell instead)`
            : "This shell's settings (its HANGAR_* variables and model keys, as `hangar serve` would start here; not a running server's)";
        return `${note}${head}\n${formatStatus(answer, answer.checked === 'server' ? 'Checks:' : "Checks of this shell's settings:")}`;
      });
      if (status.checks.some((check) => !check.ok)) process.exitCode = 1;
    });
}

/**
 * The status of the server at HANGAR_URL, or why there is none to check: nothing answers (the usual case before
 * `hangar serve`), or it refuses this shell's key.
 */
async function askServer(): Promise<{ url: string; status?: InstanceStatus; why?: string }> {
  const url = (process.env.HANGAR_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
  const key = process.env.HANGAR_API_KEY;
  try {
    const response = await fetchApi(`${url}/api/v1/admin/status`, {
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(process.env.HANGAR_TEAM ? { 'x-team-uid': process.env.HANGAR_TEAM } : {}),
      },
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    const status = await jsonOf<InstanceStatus>(response);
    if (!Array.isArray(status?.checks)) return { url, why: `What answers at ${url} is not Hangar.\n\n` };
    return { url, status };
  } catch (error) {
    if (!(error instanceof ApiProblem)) return { url, why: `What answers at ${url} is not Hangar.\n\n` };
    if (error.status === 0) return { url, why: `No Hangar answers at ${url} (HANGAR_URL): ${error.detail}.\n\n` };
    const fix =
      error.status === 401
        ? "set HANGAR_API_KEY to an instance administrator's key to check it"
        : error.status === 403
          ? "HANGAR_API_KEY is not an instance administrator's key, which its checks need"
          : `it answered ${error.status}: ${error.message}`;
    return { url, why: `A Hangar answers at ${url}, but ${fix}.\n\n` };
  }
}

async function localStatus(): Promise<InstanceStatus> {
  // Loaded only here: the other client verbs need none of the server's modules (scripts/check-client-imports.mjs).
  const [{ loadConfig }, { instanceStatus }] = await Promise.all([import('../config.js'), import('./status.js')]);
  return instanceStatus(loadConfig());
}
