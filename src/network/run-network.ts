import { RefusalAccount, type RefusalEntry } from './account.js';
import type { Refusal } from './proxy/protocol.js';
import type { EgressLease, EgressProxy } from './proxy/supervisor.js';
import { type EffectiveNetwork, effectiveNetwork } from './rules.js';
import type { EnvironmentNetwork, NetworkPhase } from './schemas.js';
import { type SpawnNetwork, setWorkspaceNetwork } from './workspace-networks.js';

/**
 * One execution's network, phase by phase: what its environment chose under the operator's ceilings, a lease of the
 * egress proxy while a phase's allow list is in force, and the account of what was refused. Refusals go on the
 * run's timeline as they happen (`network_refused`, the first attempt of each host), and the whole account with
 * its counts when the execution ends (`network_refusals`).
 */

type Report = (type: string, payload: Record<string, unknown>) => Promise<void>;

export interface RunNetworkOptions {
  /** The run's id: the proxy's budgets and refusals are per run. */
  run: string;
  workspace: string;
  /** The environment's network; undefined (no environment, or it names none) takes the operator's defaults. */
  network: EnvironmentNetwork | undefined;
  /** The operator's ceilings: HANGAR_SETUP_NETWORK for setup, the harness's `network` for the agent. */
  ceilings: Record<NetworkPhase, boolean>;
  /** Hangar's egress proxy, where the sandbox can be confined to it; without, an allow list means no network. */
  proxy: EgressProxy | undefined;
  report: Report;
  /** Called once per refusal (every attempt), for the metric. */
  counted?: (refusal: Refusal) => void;
}

export class RunNetwork {
  private readonly account = new RefusalAccount();
  private lease: { phase: NetworkPhase; lease: EgressLease } | undefined;
  private readonly stopListening: (() => void) | undefined;
  /** Timeline writes of refusals in flight: the account's summary waits for them. */
  private writes: Promise<void> = Promise.resolve();

  constructor(private readonly options: RunNetworkOptions) {
    this.stopListening = options.proxy?.onRefusal((refusal) => {
      if (refusal.run !== options.run) return;
      options.counted?.(refusal);
      const { entry, first } = this.account.add(refusal);
      if (!first) return;
      const { attempts: _attempts, last_at: _last, ...payload } = entry;
      this.writes = this.writes.then(() => options.report('network_refused', payload).catch(() => undefined));
    });
  }

  /** What the phase gets, after the ceilings and what the sandbox can enforce (no proxy: an allow list is off). */
  decision(phase: NetworkPhase): EffectiveNetwork {
    const chosen = effectiveNetwork(this.options.network?.[phase], this.options.ceilings[phase]);
    if (chosen.kind === 'allow' && !this.options.proxy) return { kind: 'off' };
    return chosen;
  }

  /** Whether any phase gets network at all (a container is opened with or without it). */
  get anyNetwork(): boolean {
    return this.decision('setup').kind !== 'off' || this.decision('agent').kind !== 'off';
  }

  /**
   * From now on the workspace's processes get `phase`'s network: the earlier phase's lease is closed, and an allow
   * list opens a lease of its own. A proxy that cannot open one leaves the phase without network, never open.
   */
  async enter(phase: NetworkPhase): Promise<void> {
    const { workspace, proxy, report } = this.options;
    this.lease?.lease.close();
    this.lease = undefined;
    const chosen = effectiveNetwork(this.options.network?.[phase], this.options.ceilings[phase]);
    const decision = this.decision(phase);
    if (chosen.kind === 'allow' && decision.kind === 'off')
      await report('network_allow_list_unenforced', {
        phase,
        reason: "this sandbox cannot confine a run to Hangar's egress proxy: the phase has no network",
      });
    let spawn: SpawnNetwork = { allowNetwork: decision.kind !== 'off' };
    if (decision.kind === 'allow' && proxy) {
      try {
        const lease = await proxy.open({ run: this.options.run, phase, rules: decision.rules, bind: '127.0.0.1' });
        this.lease = { phase, lease };
        spawn = { allowNetwork: true, egress: { proxyPort: lease.proxyPort, dnsPort: lease.dnsPort } };
      } catch (error) {
        spawn = { allowNetwork: false };
        await report('network_allow_list_unenforced', { phase, reason: (error as Error).message });
      }
    }
    setWorkspaceNetwork(workspace, spawn);
  }

  /** Every host refused so far, one entry per phase, host and port. */
  refusals(): RefusalEntry[] {
    return this.account.list();
  }

  /** Ends the lease and the workspace's decision; the account goes on the timeline when anything was refused. */
  async close(): Promise<void> {
    this.lease?.lease.close();
    this.lease = undefined;
    this.stopListening?.();
    setWorkspaceNetwork(this.options.workspace, undefined);
    await this.writes;
    const refusals = this.refusals();
    if (refusals.length > 0) await this.options.report('network_refusals', { refusals });
  }
}
