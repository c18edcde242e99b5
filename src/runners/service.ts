import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { formatBytes } from '../platform/bytes.js';
import { newUid } from '../platform/crypto.js';
import { withConflicts } from '../platform/db/conflicts.js';
import { conflict, invalidRequest, notFound } from '../platform/http/errors.js';
import { rfc3339 as iso } from '../platform/time.js';
import type { RunnerBody, RunnerItem, RunnerList } from './schemas.js';
import { checkRunner, type RecordedRunner, type RunnerPolicy } from './shape.js';
import * as store from './store.js';

export interface RunnersServiceOptions {
  db: Kysely<DB>;
  policy: RunnerPolicy;
  /** The operator's default limits (HANGAR_RUN_MEMORY, HANGAR_RUN_CPUS, HANGAR_RUN_PIDS), shown beside the runners. */
  defaults: { memoryBytes: number; cpus: number; pids: number };
}

const nameTaken = (name: string) => ({
  runners_team_uid_name_key: () => conflict(`this team already has a runner named ${name}`),
});

function render(row: store.RunnerRow): RunnerItem {
  return {
    uid: row.uid,
    name: row.name,
    description: row.description,
    ...row.shape,
    ...(row.factory_uid ? { factory_uid: row.factory_uid } : {}),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

const said = (limits: { memoryBytes: number; cpus: number; pids: number }) => ({
  cpus: limits.cpus,
  memory: formatBytes(limits.memoryBytes),
  pids: limits.pids,
});

/**
 * A team's runners: named sandbox kinds and shapes that its runs, agents and environments name (issue 52, field 3).
 * Team-scoped throughout: another team's runner answers as a missing one, in the API and when a run names it.
 */
export class RunnersService {
  constructor(private readonly options: RunnersServiceOptions) {}

  private get db() {
    return this.options.db;
  }

  private checked(body: RunnerBody) {
    const checked = checkRunner(body, this.options.policy);
    if ('problem' in checked) throw invalidRequest(checked.problem);
    return { name: body.name.trim(), description: body.description?.trim() ?? '', shape: checked.shape };
  }

  async create(caller: Caller, body: RunnerBody, factoryUid?: string, db: Kysely<DB> = this.db): Promise<RunnerItem> {
    const values = this.checked(body);
    const uid = newUid();
    await withConflicts(
      store.insertRunner(db, {
        uid,
        team_uid: caller.teamUid,
        ...values,
        ...(factoryUid ? { factory_uid: factoryUid } : {}),
      }),
      nameTaken(values.name),
    );
    return this.get(caller, uid, db);
  }

  async list(caller: Caller): Promise<RunnerList> {
    const { policy, defaults } = this.options;
    return {
      runners: (await store.listRunners(this.db, caller.teamUid)).map(render),
      default: { sandbox: policy.sandbox, limits: said(defaults), maximums: said(policy.maximums) },
    };
  }

  async get(caller: Caller, uid: string, db: Kysely<DB> = this.db): Promise<RunnerItem> {
    const row = await store.findRunner(db, caller.teamUid, uid);
    if (!row) throw notFound(`runner ${uid} not found`);
    return render(row);
  }

  /** Replaces the name, the description and the whole shape; runs already created keep the shape they recorded. */
  async update(caller: Caller, uid: string, body: RunnerBody, db: Kysely<DB> = this.db): Promise<RunnerItem> {
    const values = this.checked(body);
    const updated = await withConflicts(store.updateRunner(db, caller.teamUid, uid, values), nameTaken(values.name));
    if (!updated) throw notFound(`runner ${uid} not found`);
    return this.get(caller, uid, db);
  }

  async delete(caller: Caller, uid: string, db: Kysely<DB> = this.db): Promise<void> {
    if (!(await store.deleteRunner(db, caller.teamUid, uid))) throw notFound(`runner ${uid} not found`);
  }

  /** Whether the team has the runner (an agent's or an environment's default_runner_uid must name one). */
  async exists(db: Kysely<DB>, teamUid: string, uid: string): Promise<boolean> {
    return (await store.findRunner(db, teamUid, uid)) !== undefined;
  }

  /** The runner as a run of `teamUid` records it; undefined for one the team does not have. */
  async forRun(db: Kysely<DB>, teamUid: string, uid: string): Promise<RecordedRunner | undefined> {
    const row = await store.findRunner(db, teamUid, uid);
    return row && { name: row.name, ...row.shape };
  }

  /** The runners a factory definition manages (runners/<name>.yaml). */
  async managedBy(db: Kysely<DB>, teamUid: string, factoryUid: string): Promise<store.RunnerRow[]> {
    return (await store.listRunners(db, teamUid)).filter((row) => row.factory_uid === factoryUid);
  }

  /** The names of the team's runners that another factory, or nobody's definition, manages. */
  async namesOutside(db: Kysely<DB>, teamUid: string, factoryUid: string): Promise<Set<string>> {
    const rows = await store.listRunners(db, teamUid);
    return new Set(rows.filter((row) => row.factory_uid !== factoryUid).map((row) => row.name));
  }
}
