import { type Expression, type Kysely, type SqlBool, sql } from 'kysely';
import type { DB } from '../database.js';

/**
 * Words shorter than this are matched as substrings only: they have too few trigrams for a similarity to mean
 * anything, and a trigram index cannot look up a pattern with no complete trigram.
 */
const MIN_FUZZY_WORD_LENGTH = 3;

/**
 * From this length a word is forgiven more (issue 48): one letter added, dropped or changed in a word of five
 * letters or more takes about half of its trigrams with it (`flakey` keeps 0.57 of its similarity to `flaky`), so
 * such words need LONG_WORD_SIMILARITY; shorter ones keep pg_trgm's default, SHORT_WORD_SIMILARITY, where half
 * the trigrams would match a word that merely begins with the same two letters.
 */
const LONG_WORD_LENGTH = 5;
const LONG_WORD_SIMILARITY = 0.5;
const SHORT_WORD_SIMILARITY = 0.6;

/**
 * One search word (lower case) is found in a run: as a substring of its search text, or, for a word long enough,
 * as a close spelling of a word there (pg_trgm's word similarity, at least LONG_WORD_SIMILARITY or
 * SHORT_WORD_SIMILARITY). Each word is matched on its own: the whole query's similarity, as before issue 24,
 * missed words that stand apart in the text, and on 1M runs its index recheck took seconds. Both conditions can
 * use the trigram index (`<%` at the session's threshold, which withSearchThreshold sets to the lower one), so
 * PostgreSQL picks, per query, between intersecting the index's matches for each word and walking the sort index
 * with them as a filter.
 */
export function searchWordMatches(word: string): Expression<SqlBool> {
  const substring = sql<SqlBool>`runs.search_text LIKE ${`%${word.replace(/[\\%_]/g, (c) => `\\${c}`)}%`}`;
  const length = [...word].length;
  if (length < MIN_FUZZY_WORD_LENGTH) return substring;
  if (length >= LONG_WORD_LENGTH) return sql<SqlBool>`(${substring} OR ${word} <% runs.search_text)`;
  return sql<SqlBool>`(${substring} OR (${word} <% runs.search_text AND word_similarity(${word}, runs.search_text) >= ${sql.lit(SHORT_WORD_SIMILARITY)}))`;
}

/**
 * Runs `query` in a transaction whose `<%` threshold is LONG_WORD_SIMILARITY: pg_trgm's operators read it from a
 * setting, not an argument, and an operator is what its index can look up. `set_config(..., true)` holds for the
 * transaction only, so the pool's connections keep the default.
 */
export async function withSearchThreshold<T>(db: Kysely<DB>, query: (db: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`SELECT set_config('pg_trgm.word_similarity_threshold', ${String(LONG_WORD_SIMILARITY)}, true)`.execute(
      trx,
    );
    return query(trx);
  });
}
