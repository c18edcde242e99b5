/**
 * The form in which pull request and ticket URLs are stored and looked up, so that the ways people write the
 * same address find the same run:
 * - scheme and host in lower case (they are case-insensitive); the path and query keep their case;
 * - the default port dropped (`:443` for https, `:80` for http);
 * - trailing slashes of the path dropped (`/pull/7/` is `/pull/7`; the root stays `/`);
 * - the fragment dropped (it never reaches the server);
 * - percent-escapes and the query as WHATWG URL parsing normalises them (`%7e` stays, spaces become `%20`).
 * Only http and https addresses are accepted; anything else is null.
 */
export function canonicalUrl(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.username || url.password) return null;
  url.hash = '';
  const path = url.pathname.replace(/\/+$/, '');
  url.pathname = path === '' ? '/' : path;
  return url.toString();
}
