// The redaction of a run's secret values from what its executions write: what a run was given (run-redactor),
// every write of its ledger (ledger), and transcript lines, also split ones (split-lines). See docs/security.md.

export { redactingLedger } from './ledger.js';
export { addBuiltInSecrets, operatorRedactor } from './run-redactor.js';
export { SplitLineRedaction } from './split-lines.js';

import type { Redactor } from '../../platform/redaction/redactor.js';
import type { ExecutionContext } from '../run/context.js';
import { redactingLedger } from './ledger.js';

/** The context an execution works in with its run's values redacted from all it writes. */
export function redactedContext<C extends ExecutionContext>(context: C, redactor: Redactor): C {
  return { ...context, redactor, ledger: redactingLedger(context.ledger, redactor) };
}
