import type { ColumnType } from 'kysely';

/** Column types shared by the slices' table declarations (Kysely's view of the SQL migrations' tables). */

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
/** Read as the parsed value; written as JSON text. */
export type Json<T> = ColumnType<T, string, string>;
export type NullableJson<T> = ColumnType<T | null, string | null | undefined, string | null>;
