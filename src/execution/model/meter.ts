import { budgetExceeded } from '../../platform/http/errors.js';

/** Tokens and their USD cost, at the catalogue's prices, of one model call or of all of an execution's. */
export interface MeteredUsage {
  input_tokens: number;
  output_tokens: number;
  /** USD; undefined when the model has no price in the catalogue. */
  cost: number | undefined;
}

/** A team's monthly budget and what the team has recorded against it this month (runs in flight included). */
export interface TeamBudgetState {
  limit: number;
  spent: number;
}

export interface ModelMeterOptions {
  runId: string;
  executionId: number;
  teamUid: string;
  /** The run's spend cap in USD (config.max_cost_usd or the operator's default); none: no cap. */
  cap: number | undefined;
  /** What the run's earlier executions spent: the cap is on the run's total. */
  spentBefore: number;
  /** The execution's usage so far, priced: it goes to the ledger as the built-in harness's does (LiveUsage). */
  report(usage: Record<string, number>): void;
  /** The run went past its cap, with what it has spent: the execution stops its harness. */
  overCap(spent: number): void;
}

/**
 * What one admitted model call may still cost: its estimate until the answer's usage is known, then what it
 * reported. `charge` is called with the call's usage so far each time it grows (a stream reports it as it goes).
 */
export class MeterReservation {
  private charged: MeteredUsage = { input_tokens: 0, output_tokens: 0, cost: 0 };
  private open = true;
  private seen = false;

  constructor(
    private readonly meter: ModelMeter,
    /** The worst the call is expected to cost (its input and the output it may ask for); released at its end. */
    readonly estimate: MeteredUsage,
  ) {}

  /** What is still held back for the call: its estimate less what it has been charged. */
  get held(): number {
    if (!this.open) return 0;
    return Math.max(0, (this.estimate.cost ?? 0) - (this.charged.cost ?? 0));
  }

  /** The call's usage so far (cumulative): the difference with what it was charged before goes to the run. */
  charge(usage: MeteredUsage): void {
    if (!this.open) return;
    this.seen = true;
    const delta: MeteredUsage = {
      input_tokens: Math.max(0, usage.input_tokens - this.charged.input_tokens),
      output_tokens: Math.max(0, usage.output_tokens - this.charged.output_tokens),
      cost: usage.cost === undefined ? undefined : Math.max(0, usage.cost - (this.charged.cost ?? 0)),
    };
    this.charged = {
      input_tokens: Math.max(usage.input_tokens, this.charged.input_tokens),
      output_tokens: Math.max(usage.output_tokens, this.charged.output_tokens),
      cost: usage.cost === undefined ? this.charged.cost : Math.max(usage.cost, this.charged.cost ?? 0),
    };
    this.meter.add(delta);
  }

  /**
   * The call is over. `billable`: the provider answered it (2xx); one whose usage never showed (a provider that
   * reports none, a stream cut short) is charged its estimate, so an answer the proxy cannot read is not free.
   */
  settle(billable: boolean): void {
    if (!this.open) return;
    if (billable && !this.seen) this.charge(this.estimate);
    this.open = false;
    this.meter.release(this);
  }
}

/**
 * The meter of one execution whose CLI calls its model through the server's model proxy: every answer's usage is
 * charged here as it arrives, priced at the catalogue's rates, and goes to the run's recorded usage the way the
 * built-in harness's does (so the team's budget counts it); calls are refused once the run's cap or the team's
 * budget is reached. Admission reserves each call's estimate, so of calls made at once only those that fit in what
 * is left are forwarded: the run overshoots its cap by at most what the calls in flight when it was reached cost
 * beyond their estimates, plus the last admitted one.
 */
export class ModelMeter {
  private readonly totals = { input_tokens: 0, output_tokens: 0, cost: 0, priced: true, calls: 0 };
  private readonly reservations = new Set<MeterReservation>();
  private stoppedAtCap = false;

  constructor(readonly options: ModelMeterOptions) {}

  /** Whether any call went through the proxy: the execution's usage is then the meter's, not what the CLI said. */
  get used(): boolean {
    return this.totals.calls > 0;
  }

  /** USD the run has spent (earlier executions and this one's metered calls). */
  get spent(): number {
    return this.options.spentBefore + this.totals.cost;
  }

  /** USD held back for calls in flight. */
  get held(): number {
    let held = 0;
    for (const reservation of this.reservations) held += reservation.held;
    return held;
  }

  /** The execution's usage so far in the ledger's shape (inference_cost only when every call had a price). */
  usage(): Record<string, number> {
    const { input_tokens, output_tokens, cost, priced } = this.totals;
    return {
      input_tokens,
      output_tokens,
      total_tokens: input_tokens + output_tokens,
      ...(priced ? { inference_cost: cost } : {}),
    };
  }

  /**
   * Admits a call that may cost `estimate`, or refuses it (403 budget_exceeded) when the run's cap or the team's
   * budget is already reached counting what calls in flight hold. Synchronous, so calls arriving together are
   * admitted one after another against what each reserved. `team`: the team's budget and its recorded spend, with
   * `teamHeld` what calls in flight in this process hold for the team.
   */
  admit(estimate: MeteredUsage, team: TeamBudgetState | null, teamHeld: number): MeterReservation {
    const { cap } = this.options;
    const held = this.held;
    if (cap !== undefined && this.spent + held >= cap)
      throw budgetExceeded(
        `the run has reached its spend cap of ${cap} USD (config.max_cost_usd): ${this.spent.toFixed(4)} USD spent` +
          (held > 0 ? ` and ${held.toFixed(4)} USD held for model calls in flight` : '') +
          '; the model proxy forwards no more calls for it',
      );
    if (team && team.spent + teamHeld >= team.limit)
      throw budgetExceeded(
        `the team has spent ${team.spent.toFixed(2)} USD of its monthly budget of ${team.limit.toFixed(2)} USD` +
          (teamHeld > 0 ? ` (with ${teamHeld.toFixed(4)} USD held for model calls in flight)` : '') +
          '; the model proxy forwards no more calls of its runs',
      );
    const reservation = new MeterReservation(this, estimate);
    this.reservations.add(reservation);
    this.totals.calls += 1;
    return reservation;
  }

  /** @internal A reservation's charge. */
  add(delta: MeteredUsage): void {
    this.totals.input_tokens += delta.input_tokens;
    this.totals.output_tokens += delta.output_tokens;
    if (delta.cost === undefined) this.totals.priced = false;
    else this.totals.cost += delta.cost;
    this.options.report(this.usage());
    const { cap } = this.options;
    if (cap !== undefined && !this.stoppedAtCap && this.spent > cap) {
      this.stoppedAtCap = true;
      this.options.overCap(this.spent);
    }
  }

  /** @internal A reservation's end. */
  release(reservation: MeterReservation): void {
    this.reservations.delete(reservation);
  }
}

/**
 * The meters of the executions running in this process, by run and execution: the model proxy charges the one of
 * the execution whose task token a call carries. An execution's meter exists while its agent runs.
 */
const active = new Map<string, ModelMeter>();

const keyOf = (runId: string, executionId: number) => `${runId}/${executionId}`;

/** Registers an execution's meter; the function returned removes it. */
export function activateModelMeter(meter: ModelMeter): () => void {
  const key = keyOf(meter.options.runId, meter.options.executionId);
  active.set(key, meter);
  return () => {
    if (active.get(key) === meter) active.delete(key);
  };
}

/** The meter of an execution whose agent runs in this process, if it is one. */
export function activeModelMeter(runId: string, executionId: number): ModelMeter | undefined {
  return active.get(keyOf(runId, executionId));
}

/** USD held for calls in flight of a team's executions in this process (the team's budget counts them). */
export function teamHeld(teamUid: string): number {
  let held = 0;
  for (const meter of active.values()) if (meter.options.teamUid === teamUid) held += meter.held;
  return held;
}
