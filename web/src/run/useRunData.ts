// The run page's data: the run, its conversation and its environment, reloaded as its live events arrive.
import { ApiProblem, seg } from '../api/client';
import type { Conversation, EnvironmentDetail, ExplainedRun } from '../api/types';
import { type Resource, useResource } from '../hooks';
import { useClient } from '../session';
import { type RunFollow, useRunFollow, useThrottle } from './useRunFollow';

/** The members of a run's agent_config the page shows. */
export interface RunConfig {
  environment_id?: string;
  harness?: { type?: string };
  model_id?: string;
  /** The runner the run resolved to at its creation, and its shape as it was then. */
  runner_id?: string;
  runner?: { name: string; sandbox?: string; limits?: { cpus?: number; memory?: string; pids?: number } };
  /** Whose GitHub identity its tokens stand for, as the run recorded it. */
  credential_strategy?: 'CREATOR' | 'EXECUTOR';
  computer_use_model_id?: string;
}

export interface RunData {
  run: Resource<ExplainedRun>;
  /** null: the harness has not written anything yet. */
  conversation: Resource<Conversation | null>;
  environment: Resource<EnvironmentDetail | null>;
  config: RunConfig;
  follow: RunFollow;
}

export function useRunData(runId: string): RunData {
  const client = useClient();
  const run = useResource((signal) => client.get<ExplainedRun>(`/agent/runs/${seg(runId)}`, undefined, signal), runId);
  const conversation = useResource<Conversation | null>(async (signal) => {
    try {
      return await client.get<Conversation>(`/agent/runs/${seg(runId)}/conversation`, undefined, signal);
    } catch (error) {
      // 404: the harness has not written anything yet.
      if (error instanceof ApiProblem && error.status === 404) return null;
      throw error;
    }
  }, runId);
  const reloadRun = useThrottle(() => void run.reload(), 300);
  const reloadConversation = useThrottle(() => void conversation.reload(), 1000);
  const follow = useRunFollow(runId, {
    onTimeline: reloadRun,
    onOutput: reloadConversation,
    onEnd() {
      void run.reload();
      void conversation.reload();
    },
  });

  const config = (run.data?.agent_config ?? {}) as RunConfig;
  // The environment by its name; its ID stays in the tooltip (and shows alone if the environment is gone).
  const environment = useResource<EnvironmentDetail | null>(
    async (signal) =>
      config.environment_id
        ? await client.get<EnvironmentDetail>(`/environments/${seg(config.environment_id)}`, undefined, signal)
        : null,
    config.environment_id ?? '',
  );
  return { run, conversation, environment, config, follow };
}
