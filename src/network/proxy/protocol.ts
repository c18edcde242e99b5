import type { AllowRule, NetworkPhase } from '../schemas.js';

/** What the server and its egress proxy process say to each other over the child's IPC channel. */

/** Why a connection or a name was refused. */
export type RefusalReason =
  | 'not_allowed'
  | 'private_address'
  | 'name_mismatch'
  | 'no_server_name'
  | 'unresolved'
  | 'connection_limit'
  | 'byte_budget';

export interface Refusal {
  run: string;
  phase: NetworkPhase;
  host: string;
  /** The port asked for; none for a DNS question. */
  port?: number;
  reason: RefusalReason;
  detail: string;
  at: string;
}

/** One sandbox's way out: a proxy port and a resolver port of its own, judged by one phase's rules. */
export interface LeaseRequest {
  lease: string;
  run: string;
  phase: NetworkPhase;
  rules: AllowRule[];
  /** The address the lease listens on: loopback for bwrap (pasta splices it), a bridge's gateway for containers. */
  bind: string;
}

/** Settings of the whole proxy process (HANGAR_EGRESS_*). */
export interface ProxySettings {
  /** Connections one run may hold open at once, across its phases. */
  maxConnections: number;
  /** Bytes one run may move through the proxy, both ways, across its phases. */
  byteBudget: number;
  /** Private ranges or hosts the operator lets runs reach anyway (a mirror on the LAN): HANGAR_EGRESS_ALLOWED_ADDRESSES. */
  allowedAddresses: string;
  /** Names the proxy resolves to fixed addresses before asking DNS: HANGAR_EGRESS_HOSTS. */
  hosts: Record<string, string[]>;
}

export type ToProxy = { type: 'open'; request: LeaseRequest } | { type: 'close'; lease: string };

export type FromProxy =
  | { type: 'ready' }
  | { type: 'opened'; lease: string; proxyPort: number; dnsPort: number }
  | { type: 'failed'; lease: string; error: string }
  | { type: 'refusal'; refusal: Refusal };
