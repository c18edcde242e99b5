// The run's facts as a definition list: what it ran with, where it came from, who made it, when.
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import type { EnvironmentDetail, ExplainedRun, TimelineEvent } from '../api/types';
import { RunOriginFacts } from '../components/RunOrigin';
import { duration, isoSeconds, Time } from '../components/ui';
import { secondsInWords, sourceLabel } from '../words';
import type { RunConfig } from './useRunData';

/** One term of the list and its description. */
function Fact({ term, children }: { term: string; children: ReactNode }) {
  return (
    <>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </>
  );
}

export function RunFacts({
  item,
  config,
  environment,
  events,
}: {
  item: ExplainedRun;
  config: RunConfig;
  environment: EnvironmentDetail | null | undefined;
  events: TimelineEvent[];
}) {
  // What the run used: as asked, else as the agent started with it (the defaults the server chose).
  const started = [...events].reverse().find((event) => event.event_type === 'agent_started')?.payload as
    | { harness?: unknown; model_id?: unknown }
    | undefined;
  const harness = config.harness?.type ?? (typeof started?.harness === 'string' ? started.harness : undefined);
  const model = config.model_id ?? (typeof started?.model_id === 'string' ? started.model_id : undefined);
  return (
    <dl className="facts">
      {harness && <Fact term="Harness">{harness}</Fact>}
      {model && <Fact term="Model">{model}</Fact>}
      {config.computer_use_model_id && <Fact term="Computer use model">{config.computer_use_model_id}</Fact>}
      {config.credential_strategy && (
        <>
          <dt>GitHub as</dt>
          <dd title="Whose GitHub identity the run's tokens stand for (config.credential_strategy)">
            {config.credential_strategy === 'CREATOR' ? 'its creator' : 'the team (executor)'}
          </dd>
        </>
      )}
      {config.environment_id && (
        <>
          <dt>Environment</dt>
          <dd title={`Environment ID: ${config.environment_id}`}>
            {environment ? (
              <Link to={`/runs?environment_id=${encodeURIComponent(config.environment_id)}`}>
                {environment.config.name}
              </Link>
            ) : (
              <code>{config.environment_id}</code>
            )}
          </dd>
        </>
      )}
      {config.runner_id && config.runner && (
        <Fact term="Runner">
          {config.runner.name}{' '}
          <span className="muted">
            {[
              config.runner.sandbox,
              config.runner.limits?.cpus === undefined ? undefined : `${config.runner.limits.cpus} CPUs`,
              config.runner.limits?.memory,
              config.runner.limits?.pids === undefined ? undefined : `${config.runner.limits.pids} processes`,
            ]
              .filter(Boolean)
              .join(', ')}
          </span>
        </Fact>
      )}
      <Fact term="Run ID">
        <code>{item.run_id}</code>
      </Fact>
      <Fact term="Session link">
        {/* This page under HANGAR_PUBLIC_URL: the address to share, which may differ from the one in use. */}
        <a href={item.session_link}>{item.session_link}</a>
      </Fact>
      {item.conversation_id && (
        <Fact term="Conversation">
          <code>{item.conversation_id}</code>
        </Fact>
      )}
      <dt>Source</dt>
      <dd title={item.source}>{sourceLabel(item.source)}</dd>
      <Fact term="Creator">{item.creator.display_name ?? item.creator.uid}</Fact>
      <Fact term="Executor">{item.executor.display_name ?? item.executor.uid}</Fact>
      <Fact term="Created">
        <Time value={item.created_at} />
      </Fact>
      <Fact term="Started">
        <Time value={item.started_at} />
      </Fact>
      <dt>Queue wait</dt>
      <dd title="From its creation to its first claim">{secondsInWords(isoSeconds(item.queue_wait))}</dd>
      <dt>Run time</dt>
      <dd title="The time its agent worked, over all its executions">{duration(item.run_time) || '—'}</dd>
      {item.schedule && (
        <Fact term="Schedule">
          <Link to={`/runs?schedule_id=${encodeURIComponent(item.schedule.schedule_id)}`}>
            {item.schedule.schedule_name}
          </Link>{' '}
          (<code>{item.schedule.cron_schedule}</code>)
        </Fact>
      )}
      {item.parent_run_id && (
        <Fact term="Parent run">
          <Link to={`/runs/${encodeURIComponent(item.parent_run_id)}`}>{item.parent_run_id}</Link>
        </Fact>
      )}
      <RunOriginFacts item={item} />
    </dl>
  );
}
