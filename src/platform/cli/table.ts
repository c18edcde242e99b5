import { cell } from './format.js';

export interface Column<T> {
  header: string;
  value: (row: T) => unknown;
}

/** Wide enough for a run ID and a timestamp; a title past this is cut with an ellipsis. */
const MAX_CELL = 60;

function fit(text: string): string {
  const line = text.replace(/\s+/g, ' ');
  return line.length > MAX_CELL ? `${line.slice(0, MAX_CELL - 1)}…` : line;
}

/**
 * Rows under a header line, columns padded to their widest cell; the last column is not padded, so a long title
 * does not push trailing spaces, and it is never cut (it may be a link). `empty` is said instead when there is no row ("No runs match.").
 */
export function table<T>(rows: T[], columns: Array<Column<T>>, empty: string): string {
  if (rows.length === 0) return `${empty}\n`;
  const last = columns.length - 1;
  const cells = rows.map((row) =>
    columns.map((column, index) => {
      const text = cell(column.value(row));
      return index === last ? text.replace(/\s+/g, ' ') : fit(text);
    }),
  );
  const widths = columns.map((column, index) =>
    Math.max(column.header.length, ...cells.map((line) => line[index]!.length)),
  );
  const render = (line: string[]) =>
    line
      .map((text, index) => (index === line.length - 1 ? text : text.padEnd(widths[index]!)))
      .join('  ')
      .trimEnd();
  return `${[render(columns.map((column) => column.header)), ...cells.map(render)].join('\n')}\n`;
}
