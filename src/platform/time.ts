/** RFC 3339 in UTC (`...Z`), the form every timestamp takes on the wire. */
export function rfc3339(value: Date | string): string {
  return new Date(value).toISOString();
}
