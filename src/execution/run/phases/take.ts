import { inSpan } from '../../../platform/tracing.js';
import { NOTHING, type Phase, type RunScope } from './types.js';

/**
 * The server's engine claims runs straight into CLAIMED; a worker takes its assigned run here. A run no longer the
 * worker's (cancelled, or assigned elsewhere) ends the execution with nothing to record.
 */
export async function take({ run, record, context }: RunScope): Promise<Phase<null>> {
  if (run.state !== 'PENDING') return { continue: null };
  const taken = await inSpan('claim', {}, () =>
    record.transition('PENDING', 'CLAIMED', [{ type: 'oz_run_claimed', payload: { engine: context.engineId } }]),
  );
  return taken.moved ? { continue: null } : NOTHING;
}
