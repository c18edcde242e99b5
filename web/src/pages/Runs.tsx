import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import type { Query } from '../api/client';
import { ARTIFACT_TYPES, RUN_SOURCES, RUN_STATES, type RunList, SORT_FIELDS } from '../api/types';
import { ResourceList } from '../components/ResourceList';
import { duration, Empty, PageHeader, StateBadge, stateLabel, Time } from '../components/ui';
import { WaitingBanner } from '../components/WaitingBanner';
import { useResource } from '../hooks';
import { useClient } from '../session';
import { sourceLabel } from '../words';

/** How often the list looks again, so state changes show without a reload. */
const POLL_MS = 3000;
/** How long typing in a text filter pauses before the list follows it. */
const TYPING_MS = 400;
const FAILURE_STATES = ['FAILED', 'ERROR', 'BLOCKED'];

/** Why a run failed, in one line: its status message, with the error code in the tooltip. */
function FailureReason(run: RunList['runs'][number]) {
  if (!FAILURE_STATES.includes(run.state)) return <span className="muted">—</span>;
  const { message, error_code: code } = (run.status_message ?? {}) as { message?: unknown; error_code?: unknown };
  const named = typeof code === 'string' ? code : undefined;
  const text = typeof message === 'string' && message ? message : named;
  if (!text) return <span className="muted">—</span>;
  return <span title={named && text !== named ? `${named}: ${text}` : text}>{text}</span>;
}

/** Filters kept in the page's address (so a filtered list can be shared), named as the API names them. */
const TEXT_FILTERS = [
  ['name', 'Agent config name'],
  ['model_id', 'Model'],
  ['creator', 'Creator UID'],
  ['executor', 'Executor UID'],
  ['environment_id', 'Environment ID'],
  ['schedule_id', 'Schedule ID'],
  ['skill', 'Skill'],
  ['ancestor_run_id', 'Ancestor run ID'],
  ['automation_id', 'Automation ID'],
  ['factory_uid', 'Factory UID'],
] as const;
const DATE_FILTERS = [
  ['created_after', 'Created after'],
  ['created_before', 'Created before'],
  ['updated_after', 'Updated after'],
] as const;
const SELECT_FILTERS = ['source', 'artifact_type', 'execution_location'] as const;

function apiQuery(params: URLSearchParams): Query {
  const query: Query = {
    limit: params.get('limit') ?? '20',
    sort_by: params.get('sort_by') ?? 'updated_at',
    sort_order: params.get('sort_order') ?? 'desc',
    state: params.getAll('state'),
    q: params.get('q'),
    cursor: params.get('cursor'),
  };
  for (const [name] of [...TEXT_FILTERS, ...DATE_FILTERS]) query[name] = params.get(name);
  for (const name of SELECT_FILTERS) query[name] = params.get(name);
  return query;
}

/** A datetime-local value (local time) as RFC 3339, and back. */
const toIso = (local: string) => (local ? new Date(local).toISOString() : '');
function toLocal(iso: string | null): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
}

export function RunsPage() {
  const client = useClient();
  const [params, setParams] = useSearchParams();
  // Cursors of the pages before this one, to go back.
  const [previous, setPrevious] = useState<string[]>([]);
  const key = params.toString();
  const runs = useResource((signal) => client.get<RunList>('/agent/runs', apiQuery(params), signal), key, {
    pollMs: POLL_MS,
  });

  // The form is rebuilt from the address only when the address changed by other means (clear, back, a link):
  // while a person types, it keeps its focus and what they typed.
  const applied = useRef<string | undefined>(undefined);
  const [formKey, setFormKey] = useState(key);
  useEffect(() => {
    if (key !== applied.current) setFormKey(key);
  }, [key]);
  const typing = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(typing.current), []);

  /** Filters apply as they change: at once for a choice, after a pause in typing for text. */
  const apply = (form: HTMLFormElement) => {
    clearTimeout(typing.current);
    const next = new URLSearchParams();
    for (const [name, value] of new FormData(form).entries()) {
      if (typeof value !== 'string' || value === '') continue;
      next.append(name, DATE_FILTERS.some(([date]) => date === name) ? toIso(value) : value);
    }
    if (next.toString() === params.toString()) return;
    applied.current = next.toString();
    setPrevious([]);
    setParams(next);
  };
  const onFilterChange = (event: FormEvent<HTMLFormElement>) => {
    const target = event.target as HTMLInputElement;
    const form = event.currentTarget;
    const typed = target.tagName === 'INPUT' && ['search', 'text'].includes(target.type);
    if (!typed) return apply(form);
    clearTimeout(typing.current);
    typing.current = setTimeout(() => apply(form), TYPING_MS);
  };
  const applyFilters = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    apply(event.currentTarget);
  };

  const goTo = (cursor: string | undefined) => {
    const next = new URLSearchParams(params);
    if (cursor) next.set('cursor', cursor);
    else next.delete('cursor');
    setParams(next);
  };

  const filtered = [...params.keys()].some((name) => !['cursor', 'sort_by', 'sort_order', 'limit'].includes(name));
  const extraFilters =
    [...TEXT_FILTERS, ...DATE_FILTERS].filter(([name]) => params.get(name)).length +
    SELECT_FILTERS.filter((name) => params.get(name)).length;
  const list = runs.data;

  return (
    <>
      <PageHeader title="Runs" subtitle="Every run of your team, updated live.">
        <Link className="button" to="/runs/new">
          New run
        </Link>
      </PageHeader>

      <WaitingBanner />
      <form
        className="filters card"
        onSubmit={applyFilters}
        onChange={onFilterChange}
        key={formKey}
        aria-label="Filter runs"
        role="search"
      >
        <div className="filter-row">
          <label className="grow">
            Search
            <input type="search" name="q" defaultValue={params.get('q') ?? ''} placeholder="Title, prompt or skill" />
          </label>
          <label>
            Sort by
            <select name="sort_by" defaultValue={params.get('sort_by') ?? 'updated_at'}>
              {SORT_FIELDS.map((field) => (
                <option key={field} value={field}>
                  {field.replace('_at', '').replace('_', ' ')}
                </option>
              ))}
            </select>
          </label>
          <label>
            Order
            <select name="sort_order" defaultValue={params.get('sort_order') ?? 'desc'}>
              <option value="desc">Descending</option>
              <option value="asc">Ascending</option>
            </select>
          </label>
          <label>
            Per page
            <select name="limit" defaultValue={params.get('limit') ?? '20'}>
              {['10', '20', '50', '100'].map((size) => (
                <option key={size}>{size}</option>
              ))}
            </select>
          </label>
        </div>
        <fieldset className="states">
          <legend>State</legend>
          {RUN_STATES.map((state) => (
            <label key={state} className="checkbox">
              <input
                type="checkbox"
                name="state"
                value={state}
                defaultChecked={params.getAll('state').includes(state)}
              />
              {stateLabel(state)}
            </label>
          ))}
        </fieldset>
        <details open={extraFilters > 0}>
          <summary>More filters{extraFilters > 0 ? ` (${extraFilters})` : ''}</summary>
          <div className="filter-grid">
            <label>
              Source
              <select name="source" defaultValue={params.get('source') ?? ''}>
                <option value="">Any</option>
                {RUN_SOURCES.map((source) => (
                  <option key={source} value={source}>
                    {sourceLabel(source)}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Artifact type
              <select name="artifact_type" defaultValue={params.get('artifact_type') ?? ''}>
                <option value="">Any</option>
                {ARTIFACT_TYPES.map((type) => (
                  <option key={type}>{type}</option>
                ))}
              </select>
            </label>
            <label>
              Execution location
              <select name="execution_location" defaultValue={params.get('execution_location') ?? ''}>
                <option value="">Any</option>
                <option>REMOTE</option>
                <option>LOCAL</option>
              </select>
            </label>
            {DATE_FILTERS.map(([name, label]) => (
              <label key={name}>
                {label}
                <input type="datetime-local" name={name} defaultValue={toLocal(params.get(name))} />
              </label>
            ))}
            {TEXT_FILTERS.map(([name, label]) => (
              <label key={name}>
                {label}
                <input name={name} defaultValue={params.get(name) ?? ''} />
              </label>
            ))}
          </div>
        </details>
        <div className="row">
          {/* Filters apply as they change; Enter in a text filter applies it without waiting. */}
          <button type="submit" className="visually-hidden" tabIndex={-1}>
            Apply filters
          </button>
          {filtered && (
            <button
              type="button"
              className="secondary"
              onClick={() => {
                setPrevious([]);
                clearTimeout(typing.current);
                setParams(new URLSearchParams());
              }}
            >
              Clear filters
            </button>
          )}
        </div>
      </form>

      <ResourceList
        items={list?.runs}
        state={runs}
        noun="the runs"
        empty={
          <Empty title={filtered ? 'No run matches these filters.' : 'No runs yet.'}>
            {!filtered && (
              <p>
                <Link to="/runs/new">Start a run</Link>, or send one with <code>hangar run "…"</code> or the API.
              </p>
            )}
          </Empty>
        }
        caption="Runs"
        className="runs"
        rowKey={(run) => run.run_id}
        columns={[
          {
            label: 'Title',
            cell: (run) => <Link to={`/runs/${encodeURIComponent(run.run_id)}`}>{run.title || run.run_id}</Link>,
          },
          { label: 'State', cell: (run) => <StateBadge state={run.state} /> },
          { label: 'Source', title: (run) => run.source, cell: (run) => sourceLabel(run.source) },
          { label: 'Failure reason', className: 'reason', cell: FailureReason },
          { label: 'Creator', cell: (run) => run.creator.display_name ?? run.creator.uid },
          { label: 'Created', cell: (run) => <Time value={run.created_at} /> },
          { label: 'Updated', cell: (run) => <Time value={run.updated_at} /> },
          { label: 'Run time', cell: (run) => duration(run.run_time) || <span className="muted">—</span> },
        ]}
      />
      {list && (previous.length > 0 || params.get('cursor') || list.page_info.has_next_page) && (
        <nav className="pager" aria-label="Pages of runs">
          <button
            type="button"
            className="secondary"
            disabled={!params.get('cursor')}
            onClick={() => {
              const back = previous[previous.length - 1];
              setPrevious(previous.slice(0, -1));
              goTo(back);
            }}
          >
            Previous page
          </button>
          <span className="muted">Page {previous.length + (params.get('cursor') ? 2 : 1)}</span>
          <button
            type="button"
            className="secondary"
            disabled={!list.page_info.has_next_page}
            onClick={() => {
              const current = params.get('cursor');
              if (current) setPrevious([...previous, current]);
              goTo(list.page_info.next_cursor);
            }}
          >
            Next page
          </button>
        </nav>
      )}
    </>
  );
}
