// The instance's status for its administrators (GET /api/v1/admin/status): what `hangar doctor` prints, the
// start summary (sandbox, harnesses, models, config file, data directory, database, URL) and each check.
import { Fragment } from 'react';
import { ApiProblem } from '../api/client';
import type { InstanceStatus } from '../api/types';
import { ErrorMessage, Json, Loading, PageHeader } from '../components/ui';
import { useResource } from '../hooks';
import { useClient } from '../session';

/** "data_dir" → "Data dir". */
const label = (name: string) => {
  const words = name.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

function Value({ value }: { value: unknown }) {
  if (value === null || value === undefined || value === '') return <span className="muted">none</span>;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return <>{String(value)}</>;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string' || typeof item === 'number'))
    return value.length ? <>{value.join(', ')}</> : <span className="muted">none</span>;
  return <Json value={value} />;
}

export function StatusPage() {
  const client = useClient();
  const status = useResource((signal) => client.get<InstanceStatus>('/admin/status', undefined, signal), 'status');
  const forbidden = status.error instanceof ApiProblem && status.error.status === 403;
  const data = status.data;
  const failing = data?.checks.filter((check) => !check.ok) ?? [];
  const warned = data?.checks.filter((check) => check.ok && check.warning) ?? [];
  return (
    <>
      <PageHeader title="Status" subtitle="How this Hangar instance is set up, and whether each part works.">
        <button type="button" className="secondary" onClick={() => void status.reload()}>
          Check again
        </button>
      </PageHeader>
      {forbidden ? (
        <p className="notice">Only an instance administrator can see the instance's status.</p>
      ) : (
        <ErrorMessage error={status.error} title="Could not load the status" />
      )}
      {status.loading && !data && <Loading what="Checking the instance" />}
      {data && (
        <>
          <p className={failing.length ? 'error' : 'notice'} role="status">
            {failing.length > 0
              ? `${failing.length} of ${data.checks.length} checks fail: ${failing.map((check) => check.name).join(', ')}.`
              : warned.length > 0
                ? `Every check passes, with a warning: ${warned.map((check) => check.name).join(', ')}.`
                : 'Every check passes.'}
          </p>
          <section className="card" aria-labelledby="checks-title">
            <h2 id="checks-title">Checks</h2>
            <ul className="checks">
              {data.checks.map((check) => (
                <li
                  key={check.name}
                  className={!check.ok ? 'check-failed' : check.warning ? 'check-warning' : 'check-ok'}
                >
                  {/* A check that passes with a warning (no model has a key) is no pass to show in green. */}
                  <span
                    className={`badge ${!check.ok ? 'state-failed' : check.warning ? 'state-queued' : 'state-succeeded'}`}
                  >
                    {!check.ok ? 'Failing' : check.warning ? 'Warning' : 'OK'}
                  </span>{' '}
                  <strong>{check.name}</strong>
                  {check.detail && <span className="muted"> — {check.detail}</span>}
                </li>
              ))}
            </ul>
          </section>
          <section className="card" aria-labelledby="summary-title">
            <h2 id="summary-title">Summary</h2>
            <dl className="facts">
              {Object.entries(data.summary).map(([name, value]) => (
                <Fragment key={name}>
                  <dt>{label(name)}</dt>
                  <dd>
                    <Value value={value} />
                  </dd>
                </Fragment>
              ))}
            </dl>
          </section>
        </>
      )}
    </>
  );
}
