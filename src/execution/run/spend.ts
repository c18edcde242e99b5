import { requestedModelId } from '../../models/index.js';
import type { ClaimedRun } from '../../runs/index.js';
import type { HarnessSession } from '../harnesses/harness.js';
import { LiveUsage } from '../model/live-usage.js';
import { ModelMeter } from '../model/meter.js';
import type { ExecutionContext } from './context.js';

type Price = ExecutionContext['price'];

/**
 * An agent's spend: its usage goes to the ledger as it grows (budgets count runs in flight), and the run's cap is
 * checked on every usage event, the harness stopped on the first one that takes the run past it. A CLI's calls
 * through the model proxy are metered there (ModelMeter), priced per call at the catalogue's rates: once the proxy
 * has seen one, the execution's usage is the meter's, and what the CLI says it used is only its transcript.
 */
export class AgentSpend {
  /** The cap and what had been spent when the run went past it: the harness is stopped, the run fails. */
  overBudget: { cap: number; spent: number } | undefined;
  readonly meter: ModelMeter;
  private harness: HarnessSession | undefined;
  private readonly live: LiveUsage;

  constructor(
    private readonly context: ExecutionContext,
    private readonly run: ClaimedRun,
    /** The built-in harness's model (its tokens are priced at the catalogue's rates). */
    private readonly modelId: string | undefined,
    private readonly cap: number | undefined,
    private readonly spentBefore: number,
  ) {
    // Already past it (a follow-up to a run its cap stopped): the harness is stopped as soon as it starts.
    if (cap !== undefined && spentBefore > cap) this.overBudget = { cap, spent: spentBefore };
    this.live = new LiveUsage(
      (usage) => context.ledger.usage(run.id, run.execution_id, usage),
      (error) => context.log.warn({ err: error, runId: run.id }, 'could not record the usage of a run in flight'),
    );
    this.meter = new ModelMeter({
      runId: run.id,
      executionId: run.execution_id,
      teamUid: run.team_uid,
      cap,
      spentBefore,
      report: (usage) => this.live.report(usage),
      overCap: (spent) => this.over(spent),
    });
  }

  /** The harness whose start is recorded: from now on, going past the cap stops it. */
  watch(harness: HarnessSession): void {
    this.harness = harness;
  }

  /** The usage a harness reported so far (summed): priced, recorded, and checked against the cap. */
  readonly onUsage = (usage: Readonly<Record<string, number>>): void => {
    if (this.meter.used) return;
    const priced = { ...usage };
    priceUsage(this.context.price, this.run.agent_config, priced, this.modelId);
    this.live.report(priced);
    if (this.cap === undefined || this.overBudget) return;
    const own = costOf(this.context.price, this.run.agent_config, usage, this.modelId);
    if (own === undefined) return;
    const spent = this.spentBefore + own;
    if (spent > this.cap) this.over(spent);
  };

  /** The execution's usage at its end: the meter's when the proxy saw its calls, else the harness's, priced. */
  final(reported: Record<string, number> | null): Record<string, number> | null {
    if (this.meter.used) return this.meter.usage();
    priceUsage(this.context.price, this.run.agent_config, reported, this.modelId);
    return reported;
  }

  private over(spent: number): void {
    if (this.cap === undefined || this.overBudget) return;
    this.overBudget = { cap: this.cap, spent };
    void this.harness?.cancel();
  }
}

/** USD spent according to `usage` (see priceUsage); undefined when it says nothing of cost. */
export function costOf(
  price: Price,
  agentConfig: Record<string, unknown>,
  usage: Readonly<Record<string, number>>,
  resolvedModelId: string | undefined,
): number | undefined {
  if (resolvedModelId === undefined && usage.inference_cost !== undefined) return usage.inference_cost;
  const modelId = resolvedModelId ?? requestedModelId(agentConfig);
  if (modelId === undefined || !price) return usage.inference_cost;
  if (usage.input_tokens === undefined && usage.output_tokens === undefined) return usage.inference_cost;
  return price(modelId, usage.input_tokens ?? 0, usage.output_tokens ?? 0) ?? usage.inference_cost;
}

/**
 * The cost of a built-in harness's tokens is the catalogue's (a CLI's own figure comes from its price table, not
 * the operator's); an operator's harness keeps its own, and tokens without one are priced at the catalogue's
 * rates when the run's model is a catalogue model.
 */
export function priceUsage(
  price: Price,
  agentConfig: Record<string, unknown>,
  usage: Record<string, number> | null,
  resolvedModelId: string | undefined,
): void {
  if (!usage || !price) return;
  if (resolvedModelId !== undefined) delete usage.inference_cost;
  if (usage.inference_cost !== undefined) return;
  const modelId = resolvedModelId ?? requestedModelId(agentConfig);
  if (modelId === undefined || (usage.input_tokens === undefined && usage.output_tokens === undefined)) return;
  const cost = price(modelId, usage.input_tokens ?? 0, usage.output_tokens ?? 0);
  if (cost !== undefined) usage.inference_cost = cost;
}

/** The USD figure of a usage record (0 when it has none). */
export function costIn(usage: Record<string, number> | null): number {
  const cost = usage?.inference_cost;
  return typeof cost === 'number' && Number.isFinite(cost) ? cost : 0;
}

/** A run's spend cap: its `config.max_cost_usd`, else the operator's default (none when neither is set). */
export function spendCap(
  agentConfig: Record<string, unknown>,
  operatorDefault: number | undefined,
): number | undefined {
  const own = agentConfig.max_cost_usd;
  return typeof own === 'number' && own > 0 ? own : operatorDefault;
}
