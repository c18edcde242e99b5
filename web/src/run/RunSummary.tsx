// The run's summary card: its state and the live connection, why it waits, how it ended, its facts, metadata,
// prompt and scores.
import { Fragment } from 'react';
import type { EnvironmentDetail, ExplainedRun, TimelineEvent } from '../api/types';
import { StateBadge } from '../components/ui';
import { FailureOutputView, failureOutputOf } from './FailureOutput';
import { RunFacts } from './RunFacts';
import type { RunConfig } from './useRunData';
import { LIVE_LABELS, type Live } from './useRunFollow';

function Metadata({ metadata }: { metadata: Record<string, string> }) {
  const entries = Object.entries(metadata);
  if (entries.length === 0) return null;
  return (
    <section aria-labelledby="metadata-title" className="metadata">
      <h3 id="metadata-title">Metadata</h3>
      <dl className="facts">
        {entries.map(([name, value]) => (
          <Fragment key={name}>
            <dt>
              <code>{name}</code>
            </dt>
            <dd>{value}</dd>
          </Fragment>
        ))}
      </dl>
    </section>
  );
}

function Scores({ scores }: { scores: ExplainedRun['scores'] }) {
  if (scores.length === 0) return null;
  return (
    <>
      <h3>Scores</h3>
      <ul>
        {scores.map((score, index) => (
          <li key={index}>
            {score.scorer_name}: {score.classification} ({score.score}, {score.passed ? 'passed' : 'not passed'}) —{' '}
            {score.reason}
          </li>
        ))}
      </ul>
    </>
  );
}

export function RunSummary({
  item,
  config,
  environment,
  events,
  live,
}: {
  item: ExplainedRun;
  config: RunConfig;
  environment: EnvironmentDetail | null | undefined;
  events: TimelineEvent[];
  live: Live;
}) {
  const failureOutput = failureOutputOf(item, events);
  const waiting = (item.state === 'QUEUED' || item.state === 'PENDING') && item.queue_reason;
  // status_message is an open object: its members are read only when they are strings.
  const { message: statusMessage, error_code: errorCode } = item.status_message ?? {};
  return (
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
      <RunFacts item={item} config={config} environment={environment} events={events} />
      <Metadata metadata={item.metadata} />
      <details>
        <summary>Prompt</summary>
        <pre className="prompt">{item.prompt}</pre>
      </details>
      <Scores scores={item.scores} />
    </section>
  );
}
