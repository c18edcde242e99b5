import type { EngineClient } from './engine-client.js';

/** The labels of an execution's container: which execution, and which workspace root's replica made it. */
export const LABEL_EXECUTION = 'dev.hangar.execution';
export const LABEL_ROOT = 'dev.hangar.workspace-root';

/** A container of this workspace root that no open or retired execution holds. */
export interface LeftoverContainer {
  id: string;
  name: string;
  runId: string;
  executionId: number;
}

/**
 * The containers of the workspace root labelled `rootLabel` (this replica's) that are neither in `open` (by id) nor
 * kept (by execution name): what removeUnused asks the database about before it removes any.
 */
export async function leftoverContainers(
  client: EngineClient,
  rootLabel: string,
  keep: Set<string>,
  open: Set<string>,
): Promise<LeftoverContainer[]> {
  const filters = JSON.stringify({ label: [`${LABEL_ROOT}=${rootLabel}`] });
  const { body } = await client.call<Array<{ Id: string; Labels: Record<string, string> | null }>>(
    'GET',
    `/containers/json?all=true&filters=${encodeURIComponent(filters)}`,
  );
  return body.flatMap((container) => {
    const name = container.Labels?.[LABEL_EXECUTION] ?? '';
    const match = /^(.+)\.(\d{1,9})$/.exec(name);
    if (!match || keep.has(name) || open.has(container.Id)) return [];
    return [{ id: container.Id, name, runId: match[1]!, executionId: Number(match[2]) }];
  });
}
