import { sql } from 'kysely';
import { storableJson } from '../../platform/db/storable-text.js';

/** A jsonb value in a statement (NULs escaped: what a run writes may contain them). */
export const json = (value: unknown) => sql`${storableJson(value)}::jsonb`;

/** JSON text for a text[] parameter a statement casts to jsonb; null stays SQL NULL. */
export const nullableJson = (value: unknown) => (value === null || value === undefined ? null : storableJson(value));
