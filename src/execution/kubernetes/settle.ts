import type { Outcome, TimelineEvent } from '../../runs/index.js';
import type { JobVerdict } from './pod-status.js';

/** What a verdict does to a run that is still this execution's: end it, or hand it to the takeback rules. */
export type Settlement =
  | { kind: 'end'; outcome: Outcome; event: TimelineEvent; deleteJob: boolean }
  | { kind: 'takeback'; event: TimelineEvent };

/**
 * A verdict in the run's words (docs/kubernetes.md): the scheduler's reason, the image and its pull error, the memory
 * limit, the run's time limit; a pod lost to an eviction or its node follows the takeback rules (queued again if the
 * agent had not started, else ERROR, retryable). A pod whose worker ended without a word failed its setup before
 * the agent, or lost the run after it: never queued again, or a broken image would loop.
 */
export function settlement(
  verdict: Exclude<JobVerdict, { kind: 'running' }>,
  context: { job: string; image: string; memory: string; agentStarted: boolean },
): Settlement {
  const event = (type: string, payload: Record<string, unknown>): TimelineEvent => ({
    type,
    payload: { job: context.job, ...payload },
  });
  switch (verdict.kind) {
    case 'unschedulable':
      return {
        kind: 'end',
        outcome: {
          state: 'ERROR',
          statusMessage: {
            message: `No node of the cluster could run the run's pod: ${verdict.message}`,
            error_code: 'resource_unavailable',
            retryable: true,
          },
          usage: null,
          eventPayload: { reason: 'Unschedulable', scheduler: verdict.message },
        },
        event: event('kubernetes_pod_unschedulable', { message: verdict.message }),
        deleteJob: true,
      };
    case 'image':
      return {
        kind: 'end',
        outcome: {
          state: 'FAILED',
          statusMessage: {
            message: `The image ${verdict.image} could not be pulled (${verdict.reason})${verdict.message ? `: ${verdict.message}` : ''}`,
            error_code: 'environment_setup_failed',
            retryable: false,
          },
          usage: null,
          eventPayload: { image: verdict.image, reason: verdict.reason },
        },
        event: event('kubernetes_image_pull_failed', {
          image: verdict.image,
          reason: verdict.reason,
          message: verdict.message,
        }),
        deleteJob: true,
      };
    case 'oom':
      return {
        kind: 'end',
        outcome: {
          state: 'FAILED',
          statusMessage: {
            message: `The run's pod exceeded its memory limit of ${context.memory} and was stopped (OOMKilled)`,
            error_code: 'resource_limit_exceeded',
            retryable: false,
          },
          usage: null,
          eventPayload: { limit_exceeded: 'memory', container: verdict.container },
        },
        event: event('kubernetes_pod_oom_killed', { container: verdict.container }),
        deleteJob: false,
      };
    case 'deadline':
      return {
        kind: 'end',
        outcome: {
          state: 'FAILED',
          statusMessage: {
            message: 'The run ran past its time limit and was stopped (the Job passed its activeDeadlineSeconds)',
            error_code: 'budget_exceeded',
            retryable: false,
          },
          usage: null,
          eventPayload: { timed_out: true },
        },
        event: event('kubernetes_job_deadline_exceeded', { message: verdict.message }),
        deleteJob: false,
      };
    case 'lost':
      return { kind: 'takeback', event: event('kubernetes_pod_lost', { reason: verdict.reason }) };
    case 'exited':
      return {
        kind: 'end',
        outcome: context.agentStarted
          ? {
              state: 'ERROR',
              statusMessage: {
                message: `The run's pod ended before it reported the run's end (${verdict.message}); the run may be retried`,
                error_code: 'resource_unavailable',
                retryable: true,
              },
              usage: null,
              eventPayload: { exit_code: verdict.exitCode },
            }
          : {
              state: 'FAILED',
              statusMessage: {
                message: `The run's pod in ${context.image} ended before its agent started (exit ${verdict.exitCode ?? 'unknown'}: ${verdict.message}); the image needs a glibc system with /bin/sh, git and libstdc++ (docs/kubernetes.md)`,
                error_code: 'environment_setup_failed',
                retryable: false,
              },
              usage: null,
              eventPayload: { exit_code: verdict.exitCode },
            },
        event: event('kubernetes_pod_exited', { exit_code: verdict.exitCode, message: verdict.message }),
        deleteJob: false,
      };
  }
}
