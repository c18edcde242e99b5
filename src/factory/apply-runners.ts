import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { ApiError } from '../platform/http/errors.js';
import type { RunnerBody, RunnersService } from '../runners/index.js';
import { change, type DefinitionChange } from './changes.js';
import type { DefinitionError, FactoryDefinition, RunnerDefinition } from './definition-types.js';

/** A runner file as the runners API takes it. */
function runnerBody(runner: RunnerDefinition): RunnerBody {
  return {
    name: runner.name,
    ...(runner.description !== null ? { description: runner.description } : {}),
    ...(runner.sandbox !== null ? { sandbox: runner.sandbox as RunnerBody['sandbox'] } : {}),
    ...(runner.limits !== null ? { limits: runner.limits as RunnerBody['limits'] } : {}),
    ...(runner.kubernetes !== null ? { kubernetes: runner.kubernetes as RunnerBody['kubernetes'] } : {}),
  };
}

/** What a change compares: the fields a runner file sets. */
const compared = (body: { description?: string; sandbox?: unknown; limits?: unknown; kubernetes?: unknown }) => ({
  description: body.description ?? '',
  sandbox: body.sandbox,
  limits: body.limits,
  kubernetes: body.kubernetes,
});

/**
 * The factory's runners (runners/<name>.yaml) reconciled with the team's, inside the apply's transaction: matched by
 * name among the factory's own, created, replaced or deleted. A name a runner outside the factory holds is an error
 * of the file, as is a shape the server refuses (its sandbox kind, the operator's maxima, runtime classes, placement).
 * Answers the changes and each saved runner's UID by name, for the agents that name it.
 */
export async function reconcileRunners(
  trx: Kysely<DB>,
  runners: RunnersService,
  caller: Caller,
  factoryUid: string,
  definition: FactoryDefinition,
  errors: DefinitionError[],
): Promise<{ changes: DefinitionChange[]; uids: Map<string, string> }> {
  const own = new Map((await runners.managedBy(trx, caller.teamUid, factoryUid)).map((row) => [row.name, row]));
  const taken = await runners.namesOutside(trx, caller.teamUid, factoryUid);
  const changes: DefinitionChange[] = [];
  const uids = new Map<string, string>();
  for (const runner of definition.runners) {
    const before = own.get(runner.name);
    own.delete(runner.name);
    if (taken.has(runner.name)) {
      errors.push({
        file: runner.file,
        line: null,
        message: `This team already has a runner named ${runner.name} that the factory does not manage; rename the file or that runner.`,
      });
      continue;
    }
    const body = runnerBody(runner);
    const after = compared(body);
    const stored = before && compared({ ...before.shape, description: before.description });
    const item = change('runner', runner.name, before?.uid ?? null, stored, after);
    try {
      const uid =
        item.action === 'unchanged'
          ? before!.uid
          : before
            ? (await runners.update(caller, before.uid, body, trx)).uid
            : (await runners.create(caller, body, factoryUid, trx)).uid;
      uids.set(runner.name, uid);
      changes.push({ ...item, uid });
    } catch (error) {
      // A conflict (409) may have aborted the transaction: it ends the reconcile as it is.
      if (!(error instanceof ApiError) || error.status >= 500 || error.status === 409) throw error;
      errors.push({ file: runner.file, line: null, message: error.detail });
    }
  }
  for (const row of own.values()) {
    await runners.delete(caller, row.uid, trx);
    changes.push({ kind: 'runner', name: row.name, action: 'delete', uid: row.uid });
  }
  return { changes, uids };
}
