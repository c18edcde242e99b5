import type { EnvironmentConfig } from '../../../environments/index.js';
import { type Harness, HarnessStartError } from '../../harnesses/harness.js';
import { type BuiltInSetup, builtInSetup } from '../../model/built-in-setup.js';
import { addBuiltInSecrets } from '../../redaction/index.js';
import { guestSecretsRefusal } from '../guest-run.js';
import { failed } from '../outcomes.js';
import type { Phase, RunScope } from './types.js';

/** What the execution runs with: its harness, a built-in harness's model and MCP servers, its environment. */
export interface Prepared {
  harnessName: string;
  /** Undefined when this server has no harness of that name (the run fails once its environment is set up). */
  harness: Harness | undefined;
  builtIn: BuiltInSetup | undefined;
  environment: EnvironmentConfig | undefined;
}

/**
 * Resolves what the run asks for. A model or MCP server that cannot be used fails the run before anything is cloned
 * or set up, and so does a guest run that would take this team's secrets into another team's environment.
 */
export async function prepare(scope: RunScope, setSpanHarness: (name: string) => void): Promise<Phase<Prepared>> {
  const { context, run } = scope;
  // A sandbox per execution (a container) is ready once it is opened (the sandbox phase); the others are now.
  if (!context.sandbox.capabilities.perExecution)
    scope.record.later({ type: 'worker_container_ready', payload: { sandbox: context.sandbox.kind } });
  const harnessName =
    run.harness ?? (run.agent_config.harness as { type?: string } | undefined)?.type ?? context.defaultHarness;
  const harness = context.harnesses.get(harnessName);
  setSpanHarness(harnessName);
  let builtIn: BuiltInSetup | undefined;
  if (harness) {
    try {
      builtIn = await builtInSetup(context, run, harnessName);
      addBuiltInSecrets(scope.redactor, harnessName, run.agent_config, builtIn);
    } catch (error) {
      if (!(error instanceof HarnessStartError)) throw error;
      return { outcome: failed({ kind: 'start_refused', error }) };
    }
  }
  const environment =
    run.environment_id !== null
      ? await context.ledger.environment(run.team_uid, run.environment_id, run.id)
      : undefined;
  // Another team's environment runs that team's setup in here: this team's secrets only with its admins' consent.
  const withheld = guestSecretsRefusal(run.agent_config, run.environment_id, environment, builtIn);
  if (withheld) return { outcome: failed({ kind: 'secrets_withheld', message: withheld }) };
  return { continue: { harnessName, harness, builtIn, environment } };
}
