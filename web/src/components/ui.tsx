// Small shared pieces: page header, form and delete buttons, error, loading and empty states, times, state badges, one-time secrets.
import { type ReactNode, useEffect, useId, useRef, useState } from 'react';
import { ApiProblem } from '../api/client';

/** The page's h1; it takes focus when the page opens, so keyboard and screen reader users land on it. */
export function PageHeader({
  title,
  children,
  subtitle,
}: {
  title: string;
  subtitle?: ReactNode;
  children?: ReactNode;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Hangar`;
    heading.current?.focus({ preventScroll: true });
  }, [title]);
  return (
    <div className="page-header">
      <div>
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {subtitle && <p className="muted">{subtitle}</p>}
      </div>
      {children && <div className="actions">{children}</div>}
    </div>
  );
}

/** An error from Hangar (its problem+json: title, detail, code, trace id) or from the browser. */
export function ErrorMessage({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  if (error instanceof ApiProblem) {
    const problems = error.problem.errors ?? [];
    return (
      <div className="error" role="alert">
        <p>
          <strong>{title ?? error.title}</strong>
          {error.detail && <>: {error.detail}</>}
        </p>
        {problems.length > 0 && (
          <ul>
            {problems.map((problem, index) => (
              <li key={index}>
                {problem.file ? `${problem.file}${problem.line ? `:${problem.line}` : ''}: ` : ''}
                {problem.message}
              </li>
            ))}
          </ul>
        )}
        <p className="muted small">
          {error.status > 0 ? `HTTP ${error.status} · ${error.code}` : error.code}
          {error.traceId && <> · trace {error.traceId}</>}
        </p>
      </div>
    );
  }
  return (
    <div className="error" role="alert">
      <p>
        <strong>{title ?? 'Something went wrong'}</strong>: {error instanceof Error ? error.message : String(error)}
      </p>
    </div>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="loading" role="status">
      {what}…
    </p>
  );
}

/** A create or edit form's buttons: submit (off while it saves) and cancel. */
export function FormActions({ submit, pending, onCancel }: { submit: ReactNode; pending: boolean; onCancel(): void }) {
  return (
    <div className="row">
      <button type="submit" disabled={pending}>
        {submit}
      </button>
      <button type="button" className="secondary" onClick={onCancel}>
        Cancel
      </button>
    </div>
  );
}

/** A delete button that asks first: `question` in a confirm dialog, then `onDelete`. `what` names it for screen readers. */
export function DeleteButton({
  what,
  question,
  pending,
  onDelete,
}: {
  what?: string;
  question: string;
  pending: boolean;
  onDelete(): unknown;
}) {
  return (
    <button
      type="button"
      className="danger"
      disabled={pending}
      aria-label={what === undefined ? undefined : `Delete ${what}`}
      onClick={() => {
        if (confirmed(question)) void onDelete();
      }}
    >
      Delete
    </button>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p>
        <strong>{title}</strong>
      </p>
      {children}
    </div>
  );
}

const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });

export function relative(date: Date, now = Date.now()): string {
  const seconds = Math.round((date.getTime() - now) / 1000);
  const abs = Math.abs(seconds);
  if (abs < 45) return relativeFormat.format(seconds, 'second');
  if (abs < 45 * 60) return relativeFormat.format(Math.round(seconds / 60), 'minute');
  if (abs < 22 * 3600) return relativeFormat.format(Math.round(seconds / 3600), 'hour');
  return relativeFormat.format(Math.round(seconds / 86400), 'day');
}

/** A time: relative in the text, exact in the tooltip and the datetime attribute. */
export function Time({ value, exact }: { value: string | null | undefined; exact?: boolean }) {
  if (!value) return <span className="muted">never</span>;
  const date = new Date(value);
  return (
    <time dateTime={value} title={absolute.format(date)}>
      {exact ? absolute.format(date) : relative(date)}
    </time>
  );
}

/** An ISO 8601 duration (PT0.035S, PT1M5S) in seconds; undefined without one. */
export function isoSeconds(iso: string | undefined): number | undefined {
  const match = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$/.exec(iso ?? '');
  if (!match) return undefined;
  const [, h, m, s] = match;
  return Number(h ?? 0) * 3600 + Number(m ?? 0) * 60 + Number(s ?? 0);
}

/** ISO 8601 duration (PT1M5S) to "1m 5s". */
export function duration(iso: string | undefined): string {
  const match = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$/.exec(iso ?? '');
  if (!match) return iso ?? '';
  const [, h, m, s] = match;
  return [h && `${h}h`, m && `${m}m`, s && `${s}s`].filter(Boolean).join(' ') || '0s';
}

const STATE_LABELS: Record<string, string> = { INPROGRESS: 'In progress' };

export const stateLabel = (state: string) => STATE_LABELS[state] ?? state.charAt(0) + state.slice(1).toLowerCase();

export function StateBadge({ state }: { state: string }) {
  return <span className={`badge state-${state.toLowerCase()}`}>{stateLabel(state)}</span>;
}

export function Flag({ on, yes, no }: { on: boolean; yes: string; no: string }) {
  return <span className={`badge ${on ? 'badge-on' : 'badge-off'}`}>{on ? yes : no}</span>;
}

/** A secret shown once, right after Hangar issued it, with a copy button. */
export function SecretOnce({ label, value, onDismiss }: { label: string; value: string; onDismiss(): void }) {
  const [copied, setCopied] = useState(false);
  const titleId = useId();
  return (
    <section className="secret" aria-labelledby={titleId}>
      <h2 id={titleId}>{label}</h2>
      <p>Copy it now: Hangar shows it only this once.</p>
      <div className="secret-row">
        <input aria-label={label} readOnly value={value} onFocus={(event) => event.currentTarget.select()} />
        <button
          type="button"
          onClick={() => {
            void navigator.clipboard?.writeText(value).then(
              () => setCopied(true),
              () => setCopied(false),
            );
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
        <button type="button" className="secondary" onClick={onDismiss}>
          Done
        </button>
      </div>
    </section>
  );
}

export function Json({ value, label }: { value: unknown; label?: string }) {
  return (
    <pre className="json" role="region" aria-label={label} tabIndex={0}>
      {typeof value === 'string' ? value : JSON.stringify(value, null, 2)}
    </pre>
  );
}

/** Asks before something that cannot be undone. */
export function confirmed(question: string): boolean {
  return window.confirm(question);
}
