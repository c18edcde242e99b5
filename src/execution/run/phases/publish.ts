import { type RefusalEntry, refusalsMarkdown } from '../../../network/index.js';
import { inSpan } from '../../../platform/tracing.js';
import type { Outcome } from '../../../runs/index.js';
import type { GitHubSession } from '../../github/session.js';
import type { RunScope } from './types.js';

/**
 * A SUCCEEDED agent's work goes to GitHub when the run's team is linked: pushed, with its pull request. The run
 * stays SUCCEEDED whatever GitHub says; a stopped execution publishes nothing.
 */
export async function publish(
  { record, signal }: RunScope,
  github: GitHubSession | null,
  workspace: string,
  outcome: Outcome,
  /** What the run's network refused: the pull request's body says so, with the line that would allow each. */
  refusals: RefusalEntry[] = [],
): Promise<Outcome> {
  if (!github || outcome.state !== 'SUCCEEDED' || signal.aborted) return outcome;
  return inSpan('publish', {}, () =>
    github.publish(workspace, outcome, (type, payload) => record.event(type, payload), refusalsMarkdown(refusals)),
  );
}
