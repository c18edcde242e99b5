import type { Kysely } from 'kysely';
import { Compile } from 'typebox/compile';
import type { DB } from '../database.js';
import type { Caller } from '../identities/index.js';
import { withConflicts } from '../platform/db/conflicts.js';
import { authenticationRequired, conflict, invalidRequest, notAuthorized, notFound } from '../platform/http/errors.js';
import { schemaProblem } from '../platform/schema-problem.js';
import { rfc3339 } from '../platform/time.js';
import type { RunItem, RunsService } from '../runs/index.js';
import { judgePrompt } from './judge-prompt.js';
import { type CreateScorerBody, type JudgeBody, type Scorer, Verdict, type VerdictStatus } from './schemas.js';
import * as store from './store.js';

/** Metadata keys of a judge run: the run it scores and the scorers it was given (comma-separated ids). */
export const JUDGE_OF = 'hangar_judge_of';
export const JUDGE_SCORERS = 'hangar_judge_scorers';

const verdictCheck = Compile(Verdict);

function render(row: store.ScorerRow): Scorer {
  return {
    scorer_id: row.id,
    name: row.name,
    rubric: row.rubric,
    labels: row.labels,
    passing_score: row.passing_score,
    created_at: rfc3339(row.created_at),
  };
}

/** Who sent verdicts: the task token of a run (the judge), an API key (never a judge), or nothing. */
export type ScoresCredential =
  | { kind: 'task'; runId: string; executionId: number }
  | { kind: 'api_key' }
  | { kind: 'none' };

/**
 * Scorers (how to grade a run), judge runs (runs with source RUN_SCORER that grade another run) and their
 * verdicts. A judge submits with its own task token, only for the run it was dispatched for, only while it runs.
 */
export class ScoresService {
  constructor(private readonly options: { db: Kysely<DB>; runs: RunsService }) {}

  async createScorer(caller: Caller, body: CreateScorerBody): Promise<Scorer> {
    const labels = new Set(body.labels.map((label) => label.label));
    if (labels.size !== body.labels.length) throw invalidRequest('labels: each label must appear once');
    const row = await withConflicts(
      store.insertScorer(this.options.db, {
        team_uid: caller.teamUid,
        name: body.name,
        rubric: body.rubric,
        labels: body.labels,
        passing_score: body.passing_score,
      }),
      { scorers_team_uid_name_key: () => conflict(`a scorer named "${body.name}" exists in this team`) },
    );
    return render(row);
  }

  async listScorers(caller: Caller): Promise<{ scorers: Scorer[] }> {
    return { scorers: (await store.listScorers(this.options.db, caller.teamUid)).map(render) };
  }

  async getScorer(caller: Caller, id: number): Promise<Scorer> {
    const [row] = await store.findScorers(this.options.db, caller.teamUid, [id]);
    if (!row) throw notFound(`scorer ${id} not found`);
    return render(row);
  }

  async deleteScorer(caller: Caller, id: number): Promise<void> {
    if (!(await store.deleteScorer(this.options.db, caller.teamUid, id))) throw notFound(`scorer ${id} not found`);
  }

  /** Dispatches a judge run (source RUN_SCORER, child of the scored run) with the team's scorers. */
  async judge(caller: Caller, scoredRunId: string, body: JudgeBody) {
    const scored: RunItem = await this.options.runs.get(caller, scoredRunId);
    const scorers = await store.findScorers(this.options.db, caller.teamUid, body.scorer_ids);
    const missing = body.scorer_ids.filter((id) => !scorers.some((scorer) => scorer.id === id));
    if (missing.length > 0) throw invalidRequest(`scorer_ids: no scorer ${missing.join(', ')} in this team`);
    return this.options.runs.create(
      caller,
      {
        title: `Judge: ${scored.title}`.slice(0, 500),
        prompt: judgePrompt(scored, scorers.map(render)),
        config: body.config,
        parent_run_id: scoredRunId,
        metadata: { [JUDGE_OF]: scoredRunId, [JUDGE_SCORERS]: body.scorer_ids.join(',') },
      },
      { source: 'RUN_SCORER' },
    );
  }

  /** Records the verdicts a judge sends for `scoredRunId`; each is accepted or rejected on its own. */
  async submit(
    credential: ScoresCredential,
    scoredRunId: string,
    results: unknown[],
  ): Promise<{ status: 200 | 206; body: { results: VerdictStatus[] } }> {
    if (credential.kind === 'none')
      throw authenticationRequired("scores are sent with the judge run's task token (HANGAR_TASK_TOKEN)");
    if (credential.kind === 'api_key')
      throw notAuthorized('only the judge run dispatched to score this run may send its scores');
    const judge = await store.judgeRun(this.options.db, credential.runId);
    if (!judge || judge.execution_id !== credential.executionId || !judge.sandbox_running) {
      throw authenticationRequired('this task token belongs to an execution that is not running');
    }
    if (judge.source !== 'RUN_SCORER' || judge.metadata[JUDGE_OF] !== scoredRunId) {
      throw notAuthorized(`run ${judge.id} was not dispatched to score run ${scoredRunId}`);
    }
    const assigned = (judge.metadata[JUDGE_SCORERS] ?? '').split(',').map(Number);
    const scorers = new Map(
      (await store.findScorers(this.options.db, judge.team_uid, assigned)).map((scorer) => [scorer.id, scorer]),
    );
    const statuses: VerdictStatus[] = [];
    const accepted: store.AcceptedVerdict[] = [];
    for (const result of results) {
      const scorerId =
        typeof (result as { scorer_id?: unknown })?.scorer_id === 'number'
          ? (result as { scorer_id: number }).scorer_id
          : null;
      const reject = (error: string) => statuses.push({ scorer_id: scorerId, status: 'rejected', error });
      if (!verdictCheck.Check(result)) {
        reject(
          `${schemaProblem(verdictCheck, result, 'verdict')}; expected {scorer_id, classification, reason, failed}`,
        );
        continue;
      }
      const scorer = scorers.get(result.scorer_id);
      if (!scorer) {
        reject(`scorer ${result.scorer_id} was not given to this judge run (given: ${assigned.join(', ')})`);
        continue;
      }
      if (accepted.some((verdict) => verdict.scorer_id === result.scorer_id)) {
        reject(`scorer ${result.scorer_id} has a verdict earlier in this request`);
        continue;
      }
      const label = scorer.labels.find((candidate) => candidate.label === result.classification);
      if (!label) {
        reject(
          `classification "${result.classification}" is not a label of scorer ${scorer.id} (${scorer.labels.map((l) => l.label).join(', ')})`,
        );
        continue;
      }
      accepted.push({ ...result, score: label.score, passed: !result.failed && label.score >= scorer.passing_score });
      statuses.push({ scorer_id: result.scorer_id, status: 'accepted' });
    }
    await store.upsertVerdicts(this.options.db, scoredRunId, judge.id, accepted);
    return { status: accepted.length === results.length ? 200 : 206, body: { results: statuses } };
  }
}
