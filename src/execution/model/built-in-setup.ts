import type { ResolvedDefinition } from '../../mcp/index.js';
import { isBuiltInHarness, type ResolvedModel } from '../../models/index.js';
import type { ExecutionContext } from '../run/context.js';
import { resolveRunMcpServers } from './run-mcp.js';
import { resolveRunModel } from './run-model.js';

/** What a built-in harness is started with besides the task. */
export interface BuiltInSetup {
  model: ResolvedModel;
  mcpServers: Record<string, ResolvedDefinition>;
}

/**
 * The catalogue model (with its key) and the MCP servers (with theirs) a built-in harness starts with; undefined
 * for the operator's harnesses, which read the config themselves. Throws HarnessStartError when the run cannot
 * have them.
 */
export async function builtInSetup(
  context: ExecutionContext,
  run: { id: string; team_uid: string; agent_config: Record<string, unknown> },
  harnessName: string,
): Promise<BuiltInSetup | undefined> {
  if (!context.models || !isBuiltInHarness(harnessName)) return undefined;
  const { ledger, models } = context;
  const model = await resolveRunModel(models, harnessName, run.agent_config, (name) =>
    ledger.authSecret(run.team_uid, run.id, name),
  );
  const mcpServers = await resolveRunMcpServers(run.agent_config, (uid) => ledger.mcpServer(run.team_uid, run.id, uid));
  return { model, mcpServers };
}
