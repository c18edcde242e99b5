import { Fragment, useCallback, useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import { ApiProblem, seg } from '../api/client';
import { followRunEvents } from '../api/events';
import {
  isTerminal,
  type Conversation,
  type EnvironmentDetail,
  type ExplainedRun,
  type FailureOutput,
  type TimelineEvent,
} from '../api/types';
import { ArtifactList } from '../components/Artifacts';
import { ConversationView } from '../components/Conversation';
import { RunOriginFacts } from '../components/RunOrigin';
import {
  ErrorMessage,
  Json,
  Loading,
  PageHeader,
  StateBadge,
  Time,
  confirmed,
  duration,
  isoSeconds,
} from '../components/ui';
import { useAction, useResource } from '../hooks';
import { useClient } from '../session';
import { eventLabel, secondsInWords, sourceLabel, stepDurations } from '../words';

type Live = 'connecting' | 'live' | 'reconnecting' | 'ended' | 'failed';
const LIVE_LABELS: Record<Live, string> = {
  connecting: 'Connecting to live updates…',
  live: 'Live: updates as the run goes',
  reconnecting: 'Connection lost, reconnecting…',
  ended: 'The run has ended',
  failed: 'Live updates unavailable',
};

/** Calls `work` at most once per `ms`, after the last trigger in a burst too. */
function useThrottle(work: () => void, ms: number): () => void {
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const latest = useRef(work);
  latest.current = work;
  useEffect(() => () => clearTimeout(timer.current), []);
  return useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = undefined;
      latest.current();
    }, ms);
  }, [ms]);
}

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const fullTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' });

/** What an event's payload adds in words: the setup command or repository and how long it took. */
function eventDetail(event: TimelineEvent): string | undefined {
  const payload = (event.payload ?? {}) as Record<string, unknown>;
  const took = typeof payload.duration_ms === 'number' ? ` (${secondsInWords(payload.duration_ms / 1000)})` : '';
  if (typeof payload.command === 'string') return `${payload.command}${took}`;
  if (typeof payload.repo === 'string') return `${payload.repo}${took}`;
  if (typeof payload.message === 'string') return payload.message;
  if (typeof payload.reason === 'string') return payload.reason;
  return undefined;
}

function TimelineView({ events }: { events: TimelineEvent[] }) {
  if (events.length === 0) return <p className="muted">Nothing has happened yet.</p>;
  const durations = stepDurations(events);
  return (
    <ol className="timeline">
      {events.map((event, index) => {
        const at = new Date(event.occurred_at);
        const detail = eventDetail(event);
        return (
          <li key={event.event_uuid}>
            <span className="timeline-head">
              <span className="timeline-type" title={`API event: ${event.event_type}`}>
                {eventLabel(event.event_type)}
              </span>
              <time dateTime={event.occurred_at} title={fullTime.format(at)} className="timeline-at">
                {clock.format(at)}
              </time>
            </span>
            {durations[index] && <span className="timeline-step">{durations[index]}</span>}
            {detail && <span className="timeline-detail">{detail}</span>}
            {event.execution_id && event.execution_id !== '1' && (
              <span className="muted small"> Execution {event.execution_id}</span>
            )}
            {event.payload && Object.keys(event.payload).length > 0 && (
              <details>
                <summary>Details</summary>
                <Json value={event.payload} />
              </details>
            )}
          </li>
        );
      })}
    </ol>
  );
}

const FAILED_STATES = ['FAILED', 'ERROR', 'BLOCKED'];
const TAIL_LINES = 20;

/**
 * The output of the command a failed run ended on: the API's failure_output, else (from servers without it) the
 * tail the last failed setup step or harness left on the timeline.
 */
function failureOutputOf(run: ExplainedRun, events: TimelineEvent[]): FailureOutput | undefined {
  if (!FAILED_STATES.includes(run.state)) return undefined;
  if (run.failure_output && run.failure_output.lines.length > 0) return run.failure_output;
  for (const event of [...events].reverse()) {
    const payload = (event.payload ?? {}) as Record<string, unknown>;
    const tail = payload.output_tail ?? payload.stderr_tail;
    if (typeof tail !== 'string' || tail.trim() === '') continue;
    const command =
      typeof payload.command === 'string'
        ? payload.command
        : typeof payload.repo === 'string'
          ? `git clone ${payload.repo}`
          : typeof payload.harness === 'string'
            ? `the ${payload.harness} harness`
            : eventLabel(event.event_type);
    return { command, lines: tail.split('\n').slice(-TAIL_LINES) };
  }
  return undefined;
}

function FailureOutputView({ output }: { output: FailureOutput }) {
  return (
    <div className="failure-output">
      <p className="small">
        Last {output.lines.length === 1 ? 'line' : `${output.lines.length} lines`} of <code>{output.command}</code>:
      </p>
      <pre className="output" role="region" aria-label="Failure output" tabIndex={0}>
        {output.lines.join('\n')}
      </pre>
    </div>
  );
}

export function RunPage() {
  const client = useClient();
  const runId = useParams().runId!;
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
  const [events, setEvents] = useState<TimelineEvent[]>([]);
  const [output, setOutput] = useState<string[]>([]);
  const [live, setLive] = useState<Live>('connecting');
  const [liveError, setLiveError] = useState<unknown>();
  // Bumped to follow the events again after a follow-up restarted an ended run.
  const [generation, setGeneration] = useState(0);
  const reloadRun = useThrottle(() => void run.reload(), 300);
  const reloadConversation = useThrottle(() => void conversation.reload(), 1000);

  // biome-ignore lint/correctness/useExhaustiveDependencies: what was seen of one run is cleared when another run is shown
  useEffect(() => {
    setEvents([]);
    setOutput([]);
  }, [runId]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: run and conversation reloads are stable; following restarts only for another run or a new generation
  useEffect(() => {
    setLive('connecting');
    const follower = followRunEvents(client, runId, {
      onTimeline(event) {
        setEvents((current) =>
          current.some((seen) => seen.event_uuid === event.event_uuid) ? current : [...current, event],
        );
        reloadRun();
      },
      onOutput(event) {
        setOutput((current) =>
          current.length >= 500 ? [...current.slice(-499), event.line] : [...current, event.line],
        );
        reloadConversation();
      },
      onEnd() {
        setLive('ended');
        void run.reload();
        void conversation.reload();
      },
      onError(error) {
        setLive('failed');
        setLiveError(error);
      },
      onConnection(connected) {
        setLive(connected ? 'live' : 'reconnecting');
      },
    });
    return () => follower.stop();
  }, [client, runId, generation]);

  const cancel = useAction();
  const followup = useAction();
  const transcript = useAction();
  const [message, setMessage] = useState('');
  const [sent, setSent] = useState<string>();

  const config = (run.data?.agent_config ?? {}) as {
    environment_id?: string;
    harness?: { type?: string };
    model_id?: string;
  };
  // The environment by its name; its ID stays in the tooltip (and shows alone if the environment is gone).
  const environment = useResource<EnvironmentDetail | null>(
    async (signal) =>
      config.environment_id
        ? await client.get<EnvironmentDetail>(`/environments/${seg(config.environment_id)}`, undefined, signal)
        : null,
    config.environment_id ?? '',
  );

  const item = run.data;
  if (!item) {
    return (
      <>
        <PageHeader title="Run" />
        {run.loading ? (
          <Loading what="Loading the run" />
        ) : (
          <ErrorMessage error={run.error} title="Could not load the run" />
        )}
        <p>
          <Link to="/runs">Back to the runs</Link>
        </p>
      </>
    );
  }

  const doCancel = async () => {
    if (!confirmed('Cancel this run? Its agent is stopped.')) return;
    const done = await cancel.run(() => client.post(`/agent/runs/${seg(runId)}/cancel`));
    if (done !== undefined) await run.reload();
  };

  const sendFollowup = async (event: FormEvent) => {
    event.preventDefault();
    const done = await followup.run(() => client.post(`/agent/runs/${seg(runId)}/followups`, { message }));
    if (done === undefined) return;
    setSent(message);
    setMessage('');
    await run.reload();
    if (live === 'ended' || live === 'failed') setGeneration((value) => value + 1);
  };

  const ended = isTerminal(item.state);
  // What the run used: as asked, else as the agent started with it (the defaults the server chose).
  const started = [...events].reverse().find((event) => event.event_type === 'agent_started')?.payload as
    | { harness?: unknown; model_id?: unknown }
    | undefined;
  const harness = config.harness?.type ?? (typeof started?.harness === 'string' ? started.harness : undefined);
  const model = config.model_id ?? (typeof started?.model_id === 'string' ? started.model_id : undefined);
  const failureOutput = failureOutputOf(item, events);
  const waiting = (item.state === 'QUEUED' || item.state === 'PENDING') && item.queue_reason;
  // 404 on the conversation: nothing was written, so there is no transcript to download either.
  const hasTranscript =
    Boolean(conversation.data) ||
    (conversation.error instanceof ApiProblem && conversation.error.code === 'operation_not_supported');
  const metadata = Object.entries(item.metadata);
  // status_message is an open object: its members are read only when they are strings.
  const { message: statusMessage, error_code: errorCode } = item.status_message ?? {};

  return (
    <>
      <PageHeader title={item.title || item.run_id} subtitle={<Link to="/runs">← All runs</Link>}>
        {!ended && item.is_run_type_cancellable && (
          <button type="button" className="danger" onClick={doCancel} disabled={cancel.pending}>
            {cancel.pending ? 'Cancelling…' : 'Cancel run'}
          </button>
        )}
        {hasTranscript && (
          <button
            type="button"
            className="secondary"
            disabled={transcript.pending}
            onClick={() =>
              transcript.run(() => client.download(`/agent/runs/${seg(runId)}/transcript`, `transcript-${runId}.jsonl`))
            }
          >
            Download transcript
          </button>
        )}
      </PageHeader>
      <ErrorMessage error={cancel.error} title="Could not cancel the run" />
      <ErrorMessage error={transcript.error} title="No transcript" />
      <ErrorMessage error={run.error} title="Could not refresh the run" />

      <section className="card" aria-labelledby="summary-title">
        <h2 id="summary-title" className="visually-hidden">
          Summary
        </h2>
        <p className="run-state">
          <StateBadge state={item.state} />{' '}
          <span role="status" aria-live="polite" className={`live live-${live}`}>
            {LIVE_LABELS[live]}
          </span>
        </p>
        {waiting && (
          <div className="banner banner-warning" role="status">
            <p>
              <strong>Why it waits:</strong> {item.queue_reason!.message}
            </p>
          </div>
        )}
        {typeof statusMessage === 'string' && statusMessage && (
          <p className={item.state === 'SUCCEEDED' ? 'notice' : 'error'}>
            {typeof errorCode === 'string' && errorCode && <code>{errorCode}</code>} {statusMessage}
          </p>
        )}
        {failureOutput && <FailureOutputView output={failureOutput} />}
        <dl className="facts">
          {harness && (
            <>
              <dt>Harness</dt>
              <dd>{harness}</dd>
            </>
          )}
          {model && (
            <>
              <dt>Model</dt>
              <dd>{model}</dd>
            </>
          )}
          {config.environment_id && (
            <>
              <dt>Environment</dt>
              <dd title={`Environment ID: ${config.environment_id}`}>
                {environment.data ? (
                  <Link to={`/runs?environment_id=${encodeURIComponent(config.environment_id)}`}>
                    {environment.data.config.name}
                  </Link>
                ) : (
                  <code>{config.environment_id}</code>
                )}
              </dd>
            </>
          )}
          <dt>Run ID</dt>
          <dd>
            <code>{item.run_id}</code>
          </dd>
          <dt>Session link</dt>
          <dd>
            {/* This page under HANGAR_PUBLIC_URL: the address to share, which may differ from the one in use. */}
            <a href={item.session_link}>{item.session_link}</a>
          </dd>
          {item.conversation_id && (
            <>
              <dt>Conversation</dt>
              <dd>
                <code>{item.conversation_id}</code>
              </dd>
            </>
          )}
          <dt>Source</dt>
          <dd title={item.source}>{sourceLabel(item.source)}</dd>
          <dt>Creator</dt>
          <dd>{item.creator.display_name ?? item.creator.uid}</dd>
          <dt>Executor</dt>
          <dd>{item.executor.display_name ?? item.executor.uid}</dd>
          <dt>Created</dt>
          <dd>
            <Time value={item.created_at} />
          </dd>
          <dt>Started</dt>
          <dd>
            <Time value={item.started_at} />
          </dd>
          <dt>Queue wait</dt>
          <dd title="From its creation to its first claim">{secondsInWords(isoSeconds(item.queue_wait))}</dd>
          <dt>Run time</dt>
          <dd title="The time its agent worked, over all its executions">{duration(item.run_time) || '—'}</dd>
          {item.schedule && (
            <>
              <dt>Schedule</dt>
              <dd>
                <Link to={`/runs?schedule_id=${encodeURIComponent(item.schedule.schedule_id)}`}>
                  {item.schedule.schedule_name}
                </Link>{' '}
                (<code>{item.schedule.cron_schedule}</code>)
              </dd>
            </>
          )}
          {item.parent_run_id && (
            <>
              <dt>Parent run</dt>
              <dd>
                <Link to={`/runs/${encodeURIComponent(item.parent_run_id)}`}>{item.parent_run_id}</Link>
              </dd>
            </>
          )}
          <RunOriginFacts item={item} />
        </dl>
        {metadata.length > 0 && (
          <section aria-labelledby="metadata-title" className="metadata">
            <h3 id="metadata-title">Metadata</h3>
            <dl className="facts">
              {metadata.map(([name, value]) => (
                <Fragment key={name}>
                  <dt>
                    <code>{name}</code>
                  </dt>
                  <dd>{value}</dd>
                </Fragment>
              ))}
            </dl>
          </section>
        )}
        <details>
          <summary>Prompt</summary>
          <pre className="prompt">{item.prompt}</pre>
        </details>
        {item.scores.length > 0 && (
          <>
            <h3>Scores</h3>
            <ul>
              {item.scores.map((score, index) => (
                <li key={index}>
                  {score.scorer_name}: {score.classification} ({score.score}, {score.passed ? 'passed' : 'not passed'})
                  — {score.reason}
                </li>
              ))}
            </ul>
          </>
        )}
      </section>

      <div className="run-columns">
        <section aria-labelledby="conversation-title" className="run-main">
          <h2 id="conversation-title">Conversation</h2>
          {conversation.loading && conversation.data === undefined && <Loading what="Loading the conversation" />}
          {conversation.data === null && (
            <p className="muted">
              {ended ? 'The agent said nothing in this run.' : 'The agent has not said anything yet.'}
            </p>
          )}
          {conversation.error instanceof ApiProblem && conversation.error.code === 'operation_not_supported' ? (
            <>
              <p className="muted">
                This run's harness writes plain text, so there is no conversation to show. Its output:
              </p>
              <pre className="output" role="region" tabIndex={0} aria-label="Output">
                {output.join('\n') || '(nothing yet)'}
              </pre>
            </>
          ) : (
            <ErrorMessage error={conversation.error} title="Could not load the conversation" />
          )}
          {conversation.data && <ConversationView conversation={conversation.data} />}

          <form className="followup stack" onSubmit={sendFollowup}>
            <label>
              Follow-up message
              <textarea rows={3} value={message} onChange={(event) => setMessage(event.target.value)} required />
            </label>
            <ErrorMessage error={followup.error} title="Could not send the follow-up" />
            {sent !== undefined && !followup.error && (
              <p className="notice" role="status">
                Follow-up sent.
              </p>
            )}
            <div className="row">
              <button type="submit" disabled={followup.pending || !message.trim()}>
                {followup.pending ? 'Sending…' : 'Send follow-up'}
              </button>
            </div>
          </form>
        </section>

        <aside className="run-side">
          <section aria-labelledby="artifacts-title">
            <h2 id="artifacts-title">Artifacts</h2>
            <ArtifactList artifacts={item.artifacts} />
          </section>
          <section aria-labelledby="timeline-title">
            <h2 id="timeline-title">Timeline</h2>
            <ErrorMessage error={liveError} title="Live updates unavailable" />
            <TimelineView events={events} />
          </section>
        </aside>
      </div>
    </>
  );
}
