import { invalidRequest } from '../platform/http/errors.js';

/** More words than this in one search is a pasted text rather than a search; each word costs an index lookup. */
export const MAX_SEARCH_WORDS = 10;

/**
 * The words of a runs search (`q`), each of which a run must contain (or nearly, see the store's
 * searchWordMatches): lower case, as the search text is stored; split on white space; each once. Undefined when
 * `q` has no word.
 */
export function searchWords(q: string | undefined): string[] | undefined {
  if (q === undefined) return undefined;
  const words = [
    ...new Set(
      q
        .toLowerCase()
        .split(/\s+/u)
        .filter((word) => word !== ''),
    ),
  ];
  if (words.length === 0) return undefined;
  if (words.length > MAX_SEARCH_WORDS)
    throw invalidRequest(`q: at most ${MAX_SEARCH_WORDS} words are searched for, got ${words.length}`);
  return words;
}
