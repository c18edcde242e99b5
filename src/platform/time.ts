/** A timestamp as PostgreSQL writes it in JSON when the session is in UTC: `2026-11-24T01:57:00.123456+00:00`. */
const POSTGRES_UTC = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?\+00:00$/;

/** RFC 3339 in UTC (`...Z`) with milliseconds, the form every timestamp takes on the wire. */
export function rfc3339(value: Date | string): string {
  if (typeof value === 'string') {
    // Lists render thousands of these: rewriting PostgreSQL's UTC text is several times cheaper than parsing it
    // into a Date and printing that. Any other form (another offset) goes through Date.
    const utc = POSTGRES_UTC.exec(value);
    if (utc) return `${utc[1]}.${(utc[2] ?? '').padEnd(3, '0').slice(0, 3)}Z`;
    return new Date(value).toISOString();
  }
  return value.toISOString();
}
