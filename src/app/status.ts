import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type Static, Type } from 'typebox';
import type { Config } from '../config.js';
import {
  AGENT_CLIS,
  blockingDirectory,
  containerEngineCheck,
  describeBlocking,
  locateBinary,
  placeWorkspaces,
  sandboxStatus,
} from '../execution/index.js';
import { ModelCatalogue } from '../models/index.js';
import { redactCredentials } from '../platform/http/log-redaction.js';
import { canExecute, NO_HARNESS_HINT } from './readiness.js';

/**
 * What an operator wants to know about this instance (issue 26): the start summary, `hangar doctor` and
 * `GET /api/v1/admin/status` (the dashboard's Status page) all show this one document.
 */
export const InstanceStatus = Type.Object({
  summary: Type.Object({
    sandbox: Type.String({ description: 'bwrap or process; "unusable" when HANGAR_SANDBOX=bwrap cannot work here.' }),
    reason: Type.String({ description: 'Why that sandbox: the setting, or what the probe found.' }),
    harnesses: Type.Array(Type.String(), { description: 'Each harness, with what it is and whether it can run.' }),
    default_harness: Type.String(),
    models: Type.Array(Type.String(), { description: 'Catalogue models that have a key (usable now).' }),
    config_file: Type.Union([Type.String(), Type.Null()], { description: 'HANGAR_CONFIG, or null.' }),
    data_dir: Type.String(),
    workspaces: Type.String({
      description:
        "Where executions' workspaces are; when the run user cannot reach the configured ones, Hangar's own and why.",
    }),
    database: Type.String({ description: 'PGlite in the data directory, or PostgreSQL (URL without credentials).' }),
    dashboard_url: Type.String(),
  }),
  checks: Type.Array(
    Type.Object({
      name: Type.String(),
      ok: Type.Boolean(),
      detail: Type.String({ description: 'What was found; when not ok, what to do.' }),
      warning: Type.Optional(
        Type.Boolean({
          description:
            'Set on a check that passes but is worth a look (no model has a key, though a harness can run): shown as a warning, never as a pass; `hangar doctor` still exits 0.',
        }),
      ),
    }),
  ),
});
export type InstanceStatus = Static<typeof InstanceStatus>;
type Check = InstanceStatus['checks'][number];

/** Reads the instance's status from its configuration and this machine (probes bwrap, the workspace directory, git). */
export async function instanceStatus(
  config: Config,
  options: { dashboardUrl?: string; gitTimeoutMs?: number } = {},
): Promise<InstanceStatus> {
  const models = new ModelCatalogue(config.operator.catalogue, config.modelCredentials);
  const sandbox = sandboxOf(config);
  const harnesses = harnessStatus(config);
  const usable = models.models.filter((model) => models.availability(model).usable).map((model) => model.id);
  const executes = canExecute(config, models, undefined);
  const missingKeys = [
    ...new Set(
      models.models.flatMap((model) => {
        const availability = models.availability(model);
        return !availability.usable && availability.why === 'credentials' ? [availability.detail] : [];
      }),
    ),
  ];
  const checks: Check[] = [
    { name: 'sandbox', ok: sandbox.ok, detail: sandbox.detail },
    {
      name: 'runs can execute',
      ok: executes,
      detail: executes
        ? `harness for runs that name none: ${config.operator.defaultHarness}`
        : `No model has a key and no harness is configured: runs stay QUEUED. ${NO_HARNESS_HINT}`,
    },
    ...workspaceChecks(config),
    // The engine's socket and the host paths of what a run's container binds: said now, not by a failed run.
    ...(sandbox.engine !== undefined
      ? [{ name: 'container engine', ...(await containerEngineCheck(sandbox.engine, config.workspaceDir)) }]
      : []),
    await gitCheck(config.gitBaseUrl, options.gitTimeoutMs ?? 5000),
    ...harnesses.checks,
    ...harnessReachChecks(config, sandbox.copiesUnreachableFiles),
    {
      name: 'model keys',
      ok: usable.length > 0 || executes,
      // Runs can execute without a model (a command harness), but the built-in agent cannot: a warning, not a pass.
      ...(usable.length === 0 && executes ? { warning: true } : {}),
      detail:
        (usable.length > 0 ? `usable: ${usable.join(', ')}` : 'no model has a key') +
        (missingKeys.length > 0 ? `. ${missingKeys.join(' ')}` : ''),
    },
  ];
  return { summary: instanceSummary(config, options.dashboardUrl, { sandbox, harnesses, usable }), checks };
}

/** The summary alone (the start's): no probe beyond the sandbox's, which the server makes anyway. */
export function instanceSummary(
  config: Config,
  dashboardUrl: string | undefined,
  known?: { sandbox: ReturnType<typeof sandboxStatus>; harnesses: { lines: string[] }; usable: string[] },
): InstanceStatus['summary'] {
  const sandbox = known?.sandbox ?? sandboxOf(config);
  const models = new ModelCatalogue(config.operator.catalogue, config.modelCredentials);
  return {
    sandbox: sandbox.kind,
    reason: sandbox.reason,
    harnesses: (known?.harnesses ?? harnessStatus(config)).lines,
    default_harness: config.operator.defaultHarness,
    models:
      known?.usable ?? models.models.filter((model) => models.availability(model).usable).map((model) => model.id),
    config_file: config.operatorFile ?? null,
    data_dir: config.dataDir,
    workspaces: workspacesLine(config),
    database: config.databaseUrl
      ? `PostgreSQL ${redactCredentials(config.databaseUrl)}`
      : `PGlite (embedded) in ${path.join(config.dataDir, 'pglite')}`,
    dashboard_url: dashboardUrl ?? config.publicUrl,
  };
}

/** The sandbox chosen and whether it works here (the sandbox's own words: execution/sandbox/mode.ts). */
function sandboxOf(config: Config): ReturnType<typeof sandboxStatus> {
  return sandboxStatus(config.sandbox, { runAs: config.runUser, container: config.container });
}

function harnessStatus(config: Config): { lines: string[]; checks: Check[] } {
  const lines = ['oz (built-in agent, in the server)'];
  const checks: Check[] = [];
  for (const cli of Object.values(AGENT_CLIS)) {
    const configured = config.operator.builtIn[cli.name].path;
    const found = locateBinary(configured ?? cli.binary, process.env.PATH);
    lines.push(`${cli.name} (${cli.binary} CLI: ${found ?? 'not installed'})`);
    // Only a CLI the operator set up is a problem when missing; the others are optional.
    if (configured || config.operator.defaultHarness === cli.name) {
      checks.push({
        name: `harness ${cli.name}`,
        ok: found !== undefined,
        detail: found
          ? `found at ${found}`
          : `${configured ?? cli.binary} not found: install the npm package ${cli.npmPackage} or fix builtin_harnesses.${cli.name}.path`,
      });
    }
  }
  for (const harness of config.operator.harnesses.values()) {
    const [program = ''] = harness.command;
    const found = locateBinary(program, process.env.PATH);
    const files = harness.command.slice(1).filter((arg) => path.isAbsolute(arg) && !fs.existsSync(arg));
    lines.push(`${harness.name} (command: ${harness.command.join(' ')})`);
    checks.push({
      name: `harness ${harness.name}`,
      ok: found !== undefined && files.length === 0,
      detail: !found
        ? `${program} not found on PATH or not executable`
        : files.length > 0
          ? `${files.join(', ')} does not exist`
          : `${program} found at ${found}`,
    });
  }
  return { lines, checks };
}

/**
 * The operator's harness files a root server's run user cannot reach (issue 48: a checkout under /root, mode 0700,
 * runs its example harness as that user, which cannot pass through /root): one sentence each, with the way out.
 */
export function unreachableHarnessFiles(config: Config, copied: boolean): string[] {
  const user = config.runUser;
  if (!user || process.getuid?.() !== 0) return [];
  const problems: string[] = [];
  for (const harness of config.operator.harnesses.values()) {
    const [program = '', ...args] = harness.command;
    const files = [locateBinary(program, process.env.PATH), ...args.filter((arg) => path.isAbsolute(arg))];
    for (const file of files) {
      if (!file || !fs.existsSync(file)) continue;
      const blocking = blockingDirectory(path.dirname(file), user);
      if (blocking)
        problems.push(
          `harness ${harness.name}: the run user (uid ${user.uid}) cannot reach ${file}: it cannot pass through ${describeBlocking(blocking)}` +
            (copied
              ? '; bwrap shows its sandbox a copy of the file alone (what lies beside it, a package, stays out of reach)'
              : '; its runs will fail') +
            `. Make it passable (chmod o+x ${blocking.path}) or put the harness where the run user can read it`,
        );
    }
  }
  return problems;
}

/** Where the sandbox gets a copy of such a file (bwrap's operatorCopies): a warning; elsewhere the runs fail. */
function harnessReachChecks(config: Config, copied: boolean): Check[] {
  return unreachableHarnessFiles(config, copied).map((detail) => ({
    name: 'run user reaches the harnesses',
    ok: copied,
    ...(copied ? { warning: true } : {}),
    detail,
  }));
}

/** Where the workspaces are, in words: Hangar's own directory says why it took the configured one's place. */
function workspacesLine(config: Config): string {
  try {
    const placed = placeWorkspaces(config);
    const moved = placed.workspacesRelocated;
    return moved
      ? `${placed.workspaceDir} (Hangar's own: the run user cannot pass through ${moved.blocking} on the way to ${moved.from})`
      : placed.workspaceDir;
  } catch (error) {
    return `${config.workspaceDir} (unusable: ${(error as Error).message})`;
  }
}

/**
 * The workspace root as the server would use it (placeWorkspaces: the run user's reach decides), writable by the
 * server and, on a root server, passable by its run user: checked by a process of that user (issue 48: doctor said
 * all was well while no run could start).
 */
function workspaceChecks(config: Config): Check[] {
  const name = 'run user reaches the workspaces';
  let placed: Config;
  try {
    placed = placeWorkspaces(config);
  } catch (error) {
    return [{ name, ok: false, detail: (error as Error).message }];
  }
  const checks = [workspaceCheck(placed.workspaceDir)];
  const user = placed.runUser;
  if (user && process.getuid?.() === 0) {
    const probe = spawnSync('sh', ['-c', 'cd -- "$1"', 'sh', placed.workspaceDir], {
      uid: user.uid,
      gid: user.gid,
      encoding: 'utf8',
      timeout: 10_000,
    });
    const moved = placed.workspacesRelocated;
    const detail = moved
      ? `${placed.workspaceDir}, Hangar's own (the run user cannot pass through ${moved.blocking}, on the way to ${moved.from})`
      : placed.workspaceDir;
    const blocking = probe.status === 0 ? undefined : blockingDirectory(placed.workspaceDir, user);
    checks.push(
      probe.status === 0
        ? { name, ok: true, detail: `uid ${user.uid} enters ${detail}` }
        : {
            name,
            ok: false,
            detail:
              `uid ${user.uid} cannot enter ${placed.workspaceDir}` +
              (blocking ? `: it cannot pass through ${describeBlocking(blocking)}` : `: ${probe.stderr.trim()}`) +
              ' (make it passable, chmod o+x, or set HANGAR_WORKSPACE_DIR)',
          },
    );
  }
  return checks;
}

function workspaceCheck(directory: string): Check {
  const name = 'workspace directory writable';
  try {
    // 0711 like the server's own levels (allowRunUserToWorkspaces): passable for the run user, not listable.
    fs.mkdirSync(directory, { recursive: true, mode: 0o711 });
    const probe = fs.mkdtempSync(path.join(directory, '.doctor-'));
    fs.rmSync(probe, { recursive: true });
    return { name, ok: true, detail: directory };
  } catch (error) {
    return {
      name,
      ok: false,
      detail: `${directory}: ${(error as Error).message} (HANGAR_WORKSPACE_DIR, HANGAR_DATA_DIR)`,
    };
  }
}

/** An answer of any status proves the host is reachable; only a transport failure is a problem. */
async function gitCheck(baseUrl: string, timeoutMs: number): Promise<Check> {
  const name = 'git base URL reachable';
  const url = new URL(baseUrl);
  if (url.protocol === 'file:') {
    const ok = fs.existsSync(url.pathname);
    return { name, ok, detail: ok ? baseUrl : `${url.pathname} does not exist (HANGAR_GIT_BASE_URL)` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { name, ok: true, detail: `${baseUrl} (not probed)` };
  try {
    const response = await fetch(baseUrl, { method: 'HEAD', signal: AbortSignal.timeout(timeoutMs) });
    return { name, ok: true, detail: `${redactCredentials(baseUrl)} answered ${response.status}` };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
    return { name, ok: false, detail: `${redactCredentials(baseUrl)} unreachable: ${cause} (HANGAR_GIT_BASE_URL)` };
  }
}
