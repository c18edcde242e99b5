// The landing page after sign-in: the team's runs at a glance, from GET /api/v1/overview (aggregated by the
// server), as charts with the figures also in words for screen readers.
import { type ReactNode, useId, useState } from 'react';
import { Link } from 'react-router';
import {
  Area,
  AreaChart,
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { type Overview, RUN_STATES } from '../api/types';
import { Empty, ErrorMessage, Loading, PageHeader, stateLabel } from '../components/ui';
import { WaitingBanner } from '../components/WaitingBanner';
import { useResource } from '../hooks';
import { useClient } from '../session';
import { secondsInWords, usd } from '../words';

const POLL_MS = 30_000;
type Window = '24h' | '7d';
const WINDOWS: [Window, string][] = [
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
];

/** One colour per state, in the badges' families: green done, red failed, blue working, grey waiting. */
const STATE_COLOURS: Record<string, string> = {
  SUCCEEDED: '#2f9e5b',
  FAILED: '#d64534',
  ERROR: '#9b1c1c',
  BLOCKED: '#e08a1e',
  CANCELLED: '#9aa4b1',
  INPROGRESS: '#3b7dd8',
  CLAIMED: '#6ea3ef',
  PENDING: '#a9c7f2',
  QUEUED: '#c3cad3',
};
/** The tooltips in the page's colours (light or dark). */
const TOOLTIP = {
  contentStyle: { background: 'var(--surface)', borderColor: 'var(--border)', color: 'var(--text)' },
} as const;
const SERIES_COLOURS = ['#3b7dd8', '#2f9e5b', '#e08a1e', '#8e5cc4', '#d64534', '#1c9aa6', '#7a8594'];

const hourFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dayHourFormat = new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit' });
const fullFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

function Chart({ title, summary, children }: { title: string; summary: string; children: ReactNode }) {
  const id = useId();
  return (
    <figure className="card chart" aria-labelledby={id}>
      <figcaption id={id}>
        <h2>{title}</h2>
      </figcaption>
      <p className="visually-hidden">{summary}</p>
      <div className="chart-area" aria-hidden="true">
        {children}
      </div>
    </figure>
  );
}

function Figure({ label, value, detail }: { label: string; value: ReactNode; detail?: ReactNode }) {
  return (
    <div className="card figure">
      <p className="figure-label">{label}</p>
      <p className="figure-value">{value}</p>
      {detail && <p className="muted small">{detail}</p>}
    </div>
  );
}

export function OverviewPage() {
  const client = useClient();
  const [window, setWindow] = useState<Window>('24h');
  const overview = useResource((signal) => client.get<Overview>('/overview', { window }, signal), window, {
    pollMs: POLL_MS,
  });
  const data = overview.data;
  const tick = (at: string) => (window === '24h' ? hourFormat : dayHourFormat).format(new Date(at));

  return (
    <>
      <PageHeader title="Overview" subtitle="Your team's runs at a glance.">
        <div className="segmented" role="group" aria-label="Period">
          {WINDOWS.map(([value, label]) => (
            <button
              key={value}
              type="button"
              className={value === window ? undefined : 'secondary'}
              aria-pressed={value === window}
              onClick={() => setWindow(value)}
            >
              {label}
            </button>
          ))}
        </div>
      </PageHeader>
      <WaitingBanner />
      <ErrorMessage error={overview.error} title="Could not load the overview" />
      {overview.loading && !data && <Loading what="Loading the overview" />}
      {data && <OverviewCharts data={data} tick={tick} />}
    </>
  );
}

function OverviewCharts({ data, tick }: { data: Overview; tick(at: string): string }) {
  const states = RUN_STATES.filter((state) => data.runs_by_hour.some((bucket) => bucket.counts[state]));
  const runs = data.runs_by_hour.map((bucket) => ({ at: bucket.at, ...bucket.counts }));
  const total = data.runs_by_hour.reduce(
    (sum, bucket) => sum + Object.values(bucket.counts).reduce((a, b) => a + b, 0),
    0,
  );
  // Runs that reported no cost (no usage, or a harness that does not price it) draw nothing.
  const spending = data.spend_by_day.filter((spend) => spend.cost_usd > 0);
  const models = [...new Set(spending.map((spend) => spend.model_id ?? 'unknown'))];
  const days = [...new Set(spending.map((spend) => spend.day))].map((day) => ({
    day,
    ...Object.fromEntries(
      spending.filter((spend) => spend.day === day).map((spend) => [spend.model_id ?? 'unknown', spend.cost_usd]),
    ),
  }));
  const spent = data.spend_by_day.reduce((sum, spend) => sum + spend.cost_usd, 0);
  const failed = data.failures.reduce((sum, failure) => sum + failure.runs, 0);
  const byState = states.map((state) => ({
    state,
    runs: data.runs_by_hour.reduce((sum, bucket) => sum + (bucket.counts[state] ?? 0), 0),
  }));

  return (
    <>
      <section className="figures" aria-label="Now">
        <Figure
          label="Waiting now"
          value={data.queue.waiting_now}
          detail={`${data.queue.queued_now} queued, ${data.queue.pending_now} assigned`}
        />
        <Figure label="Running now" value={data.queue.running_now} />
        <Figure
          label="Queue wait"
          value={`p50 ${secondsInWords(data.queue_wait.p50_seconds)}`}
          detail={`p95 ${secondsInWords(data.queue_wait.p95_seconds)} · ${data.queue_wait.runs} runs`}
        />
        <Figure
          label="Run time"
          value={`p50 ${secondsInWords(data.run_time.p50_seconds)}`}
          detail={`p95 ${secondsInWords(data.run_time.p95_seconds)} · ${data.run_time.runs} runs`}
        />
        <Figure label="Spend" value={usd(spent)} detail={`${total} runs created`} />
      </section>

      {total === 0 && (
        <Empty title="No runs in this period.">
          <p>
            <Link to="/runs/new">Start a run</Link>, or send one with <code>hangar run "…"</code>.
          </p>
        </Empty>
      )}

      <div className="charts">
        <Chart
          title="Runs per hour, by state"
          summary={`${total} runs created: ${byState.map((entry) => `${entry.runs} ${stateLabel(entry.state).toLowerCase()}`).join(', ') || 'none'}.`}
        >
          <ResponsiveContainer width="100%" height={260}>
            <BarChart data={runs}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="at" tickFormatter={tick} minTickGap={24} />
              <YAxis allowDecimals={false} width={40} />
              <Tooltip {...TOOLTIP} labelFormatter={(at) => fullFormat.format(new Date(String(at)))} />
              <Legend formatter={(state) => stateLabel(String(state))} />
              {states.map((state) => (
                <Bar
                  key={state}
                  dataKey={state}
                  name={state}
                  stackId="runs"
                  fill={STATE_COLOURS[state]}
                  maxBarSize={48}
                />
              ))}
            </BarChart>
          </ResponsiveContainer>
        </Chart>

        <Chart
          title="Queue depth"
          summary={`${data.queue.waiting_now} runs wait now; at most ${Math.max(0, ...data.queue.over_time.map((point) => point.waiting))} in this period.`}
        >
          <ResponsiveContainer width="100%" height={260}>
            <AreaChart data={data.queue.over_time}>
              <CartesianGrid strokeDasharray="3 3" vertical={false} />
              <XAxis dataKey="at" tickFormatter={tick} minTickGap={24} />
              <YAxis allowDecimals={false} width={40} />
              <Tooltip {...TOOLTIP} labelFormatter={(at) => fullFormat.format(new Date(String(at)))} />
              <Area type="linear" dataKey="waiting" name="Waiting" stroke="#3b7dd8" fill="#a9c7f2" />
            </AreaChart>
          </ResponsiveContainer>
        </Chart>

        <Chart
          title="Failures by error code"
          summary={
            failed === 0
              ? 'No failures.'
              : data.failures.map((failure) => `${failure.error_code ?? 'no code'}: ${failure.runs}`).join(', ')
          }
        >
          {failed === 0 ? (
            <p className="muted">No failures in this period.</p>
          ) : (
            <ResponsiveContainer width="100%" height={Math.max(120, 36 * data.failures.length + 40)}>
              <BarChart
                data={data.failures.map((failure) => ({ code: failure.error_code ?? 'no code', runs: failure.runs }))}
                layout="vertical"
              >
                <CartesianGrid strokeDasharray="3 3" horizontal={false} />
                <XAxis type="number" allowDecimals={false} />
                <YAxis type="category" dataKey="code" width={150} />
                <Tooltip {...TOOLTIP} />
                <Bar dataKey="runs" name="Runs" fill={STATE_COLOURS.FAILED} maxBarSize={32} />
              </BarChart>
            </ResponsiveContainer>
          )}
        </Chart>

        <Chart
          title="Spend per day, by model"
          summary={`${usd(spent)} in all: ${models.map((model) => `${model} ${usd(data.spend_by_day.filter((spend) => (spend.model_id ?? 'unknown') === model).reduce((sum, spend) => sum + spend.cost_usd, 0))}`).join(', ') || 'nothing'}.`}
        >
          {days.length === 0 ? (
            <p className="muted">Nothing spent in this period.</p>
          ) : (
            <ResponsiveContainer width="100%" height={260}>
              <BarChart data={days}>
                <CartesianGrid strokeDasharray="3 3" vertical={false} />
                <XAxis dataKey="day" />
                <YAxis width={64} tickFormatter={(value: number) => usd(value)} />
                <Tooltip {...TOOLTIP} formatter={(value) => usd(Number(value))} />
                <Legend />
                {models.map((model, index) => (
                  <Bar
                    key={model}
                    dataKey={model}
                    stackId="spend"
                    maxBarSize={64}
                    fill={SERIES_COLOURS[index % SERIES_COLOURS.length]}
                  />
                ))}
              </BarChart>
            </ResponsiveContainer>
          )}
        </Chart>
      </div>

      <div className="charts">
        <section className="card" aria-labelledby="busiest-schedules">
          <h2 id="busiest-schedules">Busiest schedules</h2>
          {data.busiest_schedules.length === 0 ? (
            <p className="muted">No scheduled runs in this period.</p>
          ) : (
            <Ranking
              rows={data.busiest_schedules.map((schedule) => ({
                key: schedule.schedule_id,
                name: <Link to={`/runs?schedule_id=${encodeURIComponent(schedule.schedule_id)}`}>{schedule.name}</Link>,
                runs: schedule.runs,
              }))}
            />
          )}
        </section>
        <section className="card" aria-labelledby="busiest-automations">
          <h2 id="busiest-automations">Busiest automations</h2>
          {data.busiest_automations.length === 0 ? (
            <p className="muted">No automation started a run in this period.</p>
          ) : (
            <Ranking
              rows={data.busiest_automations.map((automation) => ({
                key: automation.automation_id,
                name: <Link to="/factory/automations">{automation.name}</Link>,
                runs: automation.runs,
              }))}
            />
          )}
        </section>
      </div>
    </>
  );
}

function Ranking({ rows }: { rows: { key: string; name: ReactNode; runs: number }[] }) {
  const most = Math.max(1, ...rows.map((row) => row.runs));
  return (
    <table className="ranking">
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Runs</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.key}>
            <th scope="row">{row.name}</th>
            <td>
              <span className="ranking-bar" style={{ width: `${(row.runs / most) * 100}%` }} aria-hidden="true" />
              {row.runs}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
