/** How the CLI writes times, durations and values for people (the JSON and YAML outputs keep the API's own). */

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

export const isTimestamp = (value: unknown): value is string => typeof value === 'string' && ISO_TIME.test(value);

/** "3 min ago", "in 2 h", "just now": how far a moment is from now, coarsely. */
export function relative(iso: string, now = Date.now()): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  const size = Math.abs(seconds);
  if (size < 5) return 'just now';
  const amount =
    size < 60
      ? `${size} s`
      : size < 3600
        ? `${Math.round(size / 60)} min`
        : size < 86_400 * 2
          ? `${Math.round(size / 3600)} h`
          : `${Math.round(size / 86_400)} days`;
  return seconds < 0 ? `${amount} ago` : `in ${amount}`;
}

/** "2026-11-27 08:07:52 UTC (3 min ago)": the moment in UTC, as the server and cron reckon, and how long ago. */
export function time(iso: string | null | undefined): string {
  if (!iso) return '-';
  if (!isTimestamp(iso)) return iso;
  return `${shortTime(iso)} (${relative(iso)})`;
}

/** "2026-11-27 08:07 UTC" for tables: the minute is enough to tell rows apart at a glance. */
export function shortTime(iso: string | null | undefined): string {
  if (!iso) return '-';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** "42 s", "3 min 5 s", "2 h 10 min" from seconds. */
export function duration(totalSeconds: number): string {
  const seconds = Math.round(totalSeconds);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min${seconds % 60 ? ` ${seconds % 60} s` : ''}`;
  const hours = Math.floor(minutes / 60);
  return `${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
}

const ISO_DURATION = /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/;

/** An ISO 8601 duration (a run's `run_time`, "PT42.5S") in words; anything else as it is. */
export function isoDuration(value: string | null | undefined): string {
  if (!value) return '-';
  const match = ISO_DURATION.exec(value);
  if (!match) return value;
  const [, days, hours, minutes, seconds] = match.map((part) => Number(part ?? 0));
  return duration((days ?? 0) * 86_400 + (hours ?? 0) * 3600 + (minutes ?? 0) * 60 + (seconds ?? 0));
}

/** One cell or value: times in words, lists joined, objects as compact JSON, nothing as "-". */
export function cell(value: unknown): string {
  if (value === null || value === undefined || value === '') return '-';
  if (isTimestamp(value)) return shortTime(value);
  if (Array.isArray(value)) return value.length === 0 ? '-' : value.map(cell).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
