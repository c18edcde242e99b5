import type { Kysely } from 'kysely';
import type { DB } from '../database.js';
import type { Caller, Principal } from '../identities/index.js';
import { ApiError, conflict, featureNotAvailable, invalidRequest, notFound } from '../platform/http/errors.js';
import { type CursorCodec, type CursorValue, InvalidCursorError } from '../platform/http/pagination.js';
import { rfc3339 } from '../platform/time.js';
import { prepareRun, type RunCreationDependencies, type RunOrigin } from './create-request.js';
import { failureOutput, isFailedState } from './failure-output.js';
import { type CreatedRun, createOnce, type IdempotencyKey } from './idempotency.js';
import { RunInserts } from './lifecycle/insert-batches.js';
import type { RunLifecycle } from './lifecycle/run-lifecycle.js';
import { OPERATOR_CANCELLABLE_STATES } from './lifecycle/states.js';
import type { CapacityLimits, NewAttachment, NewRun } from './lifecycle/types.js';
import { MAX_METADATA_FILTER_PAIRS, metadataPairProblem } from './metadata.js';
import { networkRefusals } from './network-refusals.js';
import { isWaiting, type QueueFacts, type QueueReason, queueReasons, type WaitingRun } from './queue-reason.js';
import { type RenderContext, renderEvent, renderRun } from './render.js';
import type { ServedModelLookup } from './request-usage.js';
import { checkFollowupSecrets } from './run-secrets.js';
import type { CreateRunBody, FollowupBody, ListRunsQuery, RunItem } from './schemas.js';
import { searchWords } from './search-words.js';
import type { RunSharing, ShareLinkView } from './sharing/service.js';
import { activeLink } from './sharing/store.js';
import { cancelRefusal } from './state.js';
import * as store from './store.js';
import { callerVisibility } from './visibility.js';

export interface RunsServiceOptions extends RunCreationDependencies {
  db: Kysely<DB>;
  /** Every write of a run's state, events and inputs. */
  lifecycle: RunLifecycle;
  cursors: CursorCodec;
  /** HANGAR_PUBLIC_URL, or the address the server listens on once it does: the base of runs' session links. */
  publicUrl: () => string;
  metadataFiltering: boolean;
  limits: CapacityLimits;
  /** Called once new runs are committed in QUEUED, to wake the engines. */
  onQueued(): void;
  /** What explains why a run waits (queue_reason). */
  queueFacts: QueueFacts;
  /** The model a run used and its prices: request_usage's split by kind of token (request-usage.ts). */
  servedModel?: ServedModelLookup;
  /** Share links (config.session_sharing): a new run's is made once it is committed. */
  sharing?: RunSharing;
}

/** A run another slice starts on someone's behalf (a schedule's tick, a webhook delivery). */
export interface RunRequest {
  /** The team and creator: the run is checked and owned as if they had created it. */
  owner: Caller;
  body: CreateRunBody;
  origin: RunOrigin;
  /** Files for the workspace beyond the body's attachments (a delivery's payload). */
  files?: NewAttachment[];
}

/** A run ID as Hangar makes them (a UUID). */
const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The run a search names, if it is one: a run ID, or a run's URL (its session_link, under this server's public URL or
 * any other address of it, so a link copied from a proxy's address works too: only the `/runs/<id>` path counts).
 */
export function runIdIn(q: string | undefined, publicUrl: string): string | undefined {
  const text = q?.trim();
  if (!text || /\s/.test(text)) return undefined;
  if (RUN_ID.test(text)) return text.toLowerCase();
  let path: string;
  try {
    path = new URL(text, publicUrl).pathname;
  } catch {
    return undefined;
  }
  const match = /\/runs\/([^/]+)\/?$/.exec(path);
  const id = match ? decodeURIComponent(match[1]!) : undefined;
  return id !== undefined && RUN_ID.test(id) ? id.toLowerCase() : undefined;
}

/** `environment_id` filter value that selects runs without an environment. */
const EMPTY_ENVIRONMENT = 'empty-environment';

/**
 * What createWithin answers: per request, the run created or why not; `created` are the new runs, for
 * announceQueued() once the caller's transaction has committed.
 */
export type CreatedWithin = Array<{ run_id: string } | ApiError> & { created: readonly NewRun[] };

export class RunsService {
  private readonly inserts: RunInserts;

  constructor(private readonly options: RunsServiceOptions) {
    this.inserts = new RunInserts(options.lifecycle, options.limits, options.onQueued);
  }

  private get db() {
    return this.options.db;
  }

  private renderContext(): RenderContext {
    return { publicUrl: this.options.publicUrl(), servedModel: this.options.servedModel, now: Date.now() };
  }

  /** Creates a run as `caller` (the source is API unless another slice starts it, e.g. a judge run). */
  async create(
    caller: Caller,
    body: CreateRunBody,
    origin: RunOrigin = { source: 'API' },
  ): Promise<CreatedRun & { queue_reason?: QueueReason }> {
    const { run, attachments } = await prepareRun(this.options, this.db, caller, body, origin);
    const { atCapacity } = await this.inserts.insert(run, attachments);
    // The run as inserted explains the state answered: reading it back would cost every create a statement.
    const answer = await this.explained(
      { run_id: run.id, task_id: run.id, state: run.state, ...(atCapacity ? { at_capacity: true } : {}) },
      run,
    );
    return this.withShareLink(caller, run.id, body, origin, answer);
  }

  /**
   * A new run's share link, when its config asks for one: made once the run is committed and shown in this answer
   * only (it is kept hashed; a replayed answer does not carry it: PUT .../sharing makes another).
   */
  private async withShareLink<T extends object>(
    caller: Caller,
    runId: string,
    body: CreateRunBody,
    origin: RunOrigin,
    answer: T,
  ): Promise<T & { session_sharing?: ShareLinkView }> {
    const access = body.config?.session_sharing?.public_access;
    if (access === undefined || !this.options.sharing) return answer;
    const link = await this.options.sharing.open(
      { id: runId, teamUid: caller.teamUid },
      access,
      { type: caller.principal.type, uid: caller.principal.uid, keyUid: caller.principal.keyUid ?? null },
      origin.clientAddress ?? null,
    );
    return { ...answer, session_sharing: link };
  }

  /**
   * A create's answer with why the run waits: for `run` as given, or else as things are now (a replayed answer,
   * whose run may have moved on since).
   */
  private async explained(
    answer: CreatedRun,
    inserted?: WaitingRun,
  ): Promise<CreatedRun & { queue_reason?: QueueReason }> {
    if (!isWaiting(answer.state)) return answer;
    const run =
      inserted ??
      (await this.db
        .selectFrom('runs')
        .select(['state', 'team_uid', 'worker_host'])
        .where('id', '=', answer.run_id)
        .executeTakeFirst());
    if (!run) return answer;
    const [reason] = await queueReasons(this.db, this.options.queueFacts, [run]);
    return reason ? { ...answer, queue_reason: reason } : answer;
  }

  /**
   * Creates a run under an Idempotency-Key: the same key from the same team within the window answers what the
   * first request got (`replayed`) and creates nothing.
   */
  async createOnce(
    caller: Caller,
    body: CreateRunBody,
    key: IdempotencyKey,
    origin: RunOrigin = { source: 'API' },
  ): Promise<{ answer: CreatedRun & { queue_reason?: QueueReason }; replayed: boolean }> {
    const { answer, replayed } = await createOnce(this.options, caller.teamUid, key, () =>
      prepareRun(this.options, this.db, caller, body, origin),
    );
    const explained = await this.explained(answer);
    return {
      answer: replayed ? explained : await this.withShareLink(caller, answer.run_id, body, origin, explained),
      replayed,
    };
  }

  /**
   * For runs created inside another slice's transaction (createWithin: the scheduler's, the evaluator's), once it
   * has committed: counts them and wakes the engines. Never called for a transaction that rolled back.
   */
  announceQueued(created: CreatedWithin['created']): void {
    this.options.lifecycle.countCreated(created);
    if (created.length > 0) this.options.onQueued();
  }

  /** Routes a follow-up by the run's state; the new state shows in `GET /agent/runs/{id}`. */
  async followup(caller: Caller, runId: string, body: FollowupBody): Promise<Record<string, never>> {
    await checkFollowupSecrets(this.db, this.options, caller, runId);
    await this.options.lifecycle.followup(callerVisibility(caller), runId, body.message ?? '', body.mode);
    return {};
  }

  /**
   * Starts runs inside another slice's transaction `db` (the scheduler's, the automation evaluator's). Each
   * request is checked like an API create (an agent identity or environment may have gone since it was saved);
   * the ones that pass are inserted together, the others come back with the reason. Announce them with
   * announceQueued() once the transaction has committed.
   */
  async createWithin(db: Kysely<DB>, requests: RunRequest[]): Promise<CreatedWithin> {
    const runs: NewRun[] = [];
    const files: Array<[runId: string, attachments: NewAttachment[]]> = [];
    const outcomes: Array<{ run_id: string } | ApiError> = [];
    for (const request of requests) {
      try {
        const { run, attachments } = await prepareRun(this.options, db, request.owner, request.body, request.origin);
        const all = [...attachments, ...(request.files ?? [])];
        run.attachment_count = all.length;
        runs.push(run);
        files.push([run.id, all]);
        outcomes.push({ run_id: run.id });
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        outcomes.push(error);
      }
    }
    const lifecycle = this.options.lifecycle.within(db);
    await lifecycle.insert(runs);
    for (const [runId, attachments] of files) await lifecycle.attach(runId, attachments);
    return Object.assign(outcomes, { created: runs });
  }

  async get(caller: Caller, runId: string): Promise<RunItem> {
    const row = await store.findRun(this.db, callerVisibility(caller), runId);
    if (!row) throw notFound(`run ${runId} not found`);
    const item = renderRun(row, this.renderContext());
    const [reason] = await queueReasons(this.db, this.options.queueFacts, [row]);
    if (reason) item.queue_reason = reason;
    if (isFailedState(row.state)) {
      const output = await failureOutput(this.db, runId);
      if (output) item.failure_output = output;
    }
    const refusals = await networkRefusals(this.db, runId);
    if (refusals.length > 0) item.network_refusals = refusals;
    const link = await activeLink(this.db, runId);
    if (link)
      item.session_sharing = {
        public_access: link.public_access,
        created_at: rfc3339(link.created_at),
        created_by: { type: link.created_by_type, uid: link.created_by_uid },
      };
    return item;
  }

  async list(caller: Caller, query: ListRunsQuery, metadataFilter: Record<string, string> | null) {
    const filters = await this.filtersFrom(caller, query, metadataFilter);
    const ordering = `${query.sort_by}:${query.sort_order}`;
    let after: CursorValue[] | null = null;
    if (query.cursor !== undefined) {
      try {
        after = this.options.cursors.decode(query.cursor, ordering);
      } catch (error) {
        if (error instanceof InvalidCursorError || error instanceof SyntaxError)
          throw invalidRequest(`cursor: ${error.message}`);
        throw error;
      }
      if (!Array.isArray(after) || after.length !== store.keyWidth(query.sort_by))
        throw invalidRequest('cursor: malformed position');
    }
    const rows = await store.listRuns(this.db, callerVisibility(caller), filters, {
      sortBy: query.sort_by,
      order: query.sort_order,
      after,
      limit: query.limit + 1,
    });
    const page = rows.slice(0, query.limit);
    const hasNext = rows.length > query.limit;
    const last = page[page.length - 1];
    const reasons = await queueReasons(this.db, this.options.queueFacts, page);
    const context = this.renderContext();
    return {
      runs: page.map((row, index) => {
        const item = renderRun(row, context);
        const reason = reasons[index];
        if (reason) item.queue_reason = reason;
        return item;
      }),
      page_info: {
        has_next_page: hasNext,
        next_cursor:
          hasNext && last
            ? this.options.cursors.encode({ ordering, values: store.sortKey(last, query.sort_by) })
            : undefined,
      },
    };
  }

  private async filtersFrom(
    caller: Caller,
    query: ListRunsQuery,
    metadataFilter: Record<string, string> | null,
  ): Promise<store.RunFilters> {
    if (metadataFilter !== null) {
      if (!this.options.metadataFiltering) {
        throw featureNotAvailable('metadata filtering is not enabled on this server');
      }
      const pairs = Object.entries(metadataFilter);
      if (pairs.length > MAX_METADATA_FILTER_PAIRS) {
        throw invalidRequest(`at most ${MAX_METADATA_FILTER_PAIRS} metadata filters are allowed, got ${pairs.length}`);
      }
      for (const [key, value] of pairs) {
        const problem = metadataPairProblem(key, value);
        if (problem) throw invalidRequest(problem);
      }
    }
    if (query.skill !== undefined && query.skill_spec !== undefined && query.skill !== query.skill_spec) {
      throw invalidRequest('skill and skill_spec are the same filter; give one, or the same value');
    }
    if (
      query.ancestor_run_id !== undefined &&
      !(await store.runExists(this.db, callerVisibility(caller), query.ancestor_run_id))
    ) {
      throw invalidRequest(`ancestor run ${query.ancestor_run_id} does not exist or is not visible to you`);
    }
    return {
      states: query.state,
      configName: query.name,
      modelId: query.model_id,
      creator: query.creator,
      executor: query.executor,
      source: query.source,
      executionLocation: query.execution_location,
      createdAfter: query.created_after,
      createdBefore: query.created_before,
      updatedAfter: query.updated_after,
      environmentId: query.environment_id === EMPTY_ENVIRONMENT ? null : query.environment_id,
      skillSpec: query.skill_spec ?? query.skill,
      scheduleId: query.schedule_id,
      ancestorRunId: query.ancestor_run_id,
      metadata: metadataFilter ?? undefined,
      artifactType: query.artifact_type,
      searchWords: searchWords(query.q),
      searchRunId: runIdIn(query.q, this.options.publicUrl()),
      automationIds: query.automation_id,
      factoryUids: query.factory_uid,
    };
  }

  async cancel(caller: Caller, runId: string): Promise<string> {
    const who = callerVisibility(caller);
    const run = await store.findRun(this.db, who, runId);
    if (!run) throw notFound(`run ${runId} not found`);
    const refusal = cancelRefusal(run);
    if (refusal) throw refusal;
    if (await this.options.lifecycle.cancel(who, runId, caller.principal.displayName)) return runId;
    // Lost a race (another cancel, or the run moved on): answer for the state it is in now.
    const now = await store.findRun(this.db, who, runId);
    throw (now && cancelRefusal(now)) ?? conflict('the run changed state; retry', { retryable: true });
  }

  /**
   * An instance administrator stops a run of any team and any kind (self-hosted ones included, which the API's
   * cancel refuses), also while it is being prepared. The engine or worker holding it stops it.
   */
  async cancelAsOperator(principal: Principal, runId: string): Promise<string> {
    const { lifecycle } = this.options;
    if (await lifecycle.cancel('operator', runId, principal.displayName, OPERATOR_CANCELLABLE_STATES)) return runId;
    const run = await this.db.selectFrom('runs').select('state').where('id', '=', runId).executeTakeFirst();
    if (!run) throw notFound(`run ${runId} not found`);
    throw invalidRequest(`the run has already ended (${run.state})`);
  }

  async timeline(caller: Caller, runId: string) {
    if (!(await store.runExists(this.db, callerVisibility(caller), runId))) throw notFound(`run ${runId} not found`);
    const events = await store.listEvents(this.db, runId);
    return { events: events.map(renderEvent) };
  }
}
