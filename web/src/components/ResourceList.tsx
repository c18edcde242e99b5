// One list of a resource as every list page shows it: its load error, its loading state, an empty state, then the
// items as a table (one row per item, the first column its row header) or as cards.
import type { ReactNode } from 'react';
import { ErrorMessage, Loading } from './ui';

export interface Column<T> {
  /** The heading, and each cell's data-label (the narrow layout shows it beside the value). */
  label: string;
  /** The heading is read by screen readers only (a column of buttons). */
  labelHidden?: boolean;
  className?: string;
  /** A tooltip on the cell. */
  title?(item: T): string | undefined;
  cell(item: T): ReactNode;
}

interface Loaded<T> {
  items: T[] | undefined;
  /** The load's state (useResource): its error, and whether it is loading. */
  state: { loading: boolean; error: unknown };
  /** What is listed, with its article ("the workers"): "Loading the workers…", "Could not load the workers". */
  noun: string;
  /** Shown when the list is loaded and has no item. */
  empty: ReactNode;
}

interface AsTable<T> extends Loaded<T> {
  /** The table's caption, for screen readers. */
  caption: string;
  /** The first is the row's header. */
  columns: [Column<T>, ...Column<T>[]];
  rowKey(item: T): string;
  className?: string;
}

interface AsCards<T> extends Loaded<T> {
  card(item: T): ReactNode;
}

export function ResourceList<T>(props: AsTable<T> | AsCards<T>) {
  const { items, state, noun, empty } = props;
  return (
    <>
      <ErrorMessage error={state.error} title={`Could not load ${noun}`} />
      {state.loading && !items && <Loading what={`Loading ${noun}`} />}
      {items && items.length === 0 && empty}
      {items &&
        items.length > 0 &&
        ('card' in props ? <Cards items={items} card={props.card} /> : <Table {...props} items={items} />)}
    </>
  );
}

function Cards<T>({ items, card }: { items: T[]; card(item: T): ReactNode }) {
  return <ul className="items">{items.map(card)}</ul>;
}

function Table<T>({ items, caption, columns, rowKey, className }: AsTable<T> & { items: T[] }) {
  const [header, ...rest] = columns;
  return (
    <table className={className ? `${className} responsive` : 'responsive'}>
      <caption className="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column.label} scope="col">
              {column.labelHidden ? <span className="visually-hidden">{column.label}</span> : column.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {items.map((item) => (
          <tr key={rowKey(item)}>
            <th scope="row" data-label={header.label} className={header.className} title={header.title?.(item)}>
              {header.cell(item)}
            </th>
            {rest.map((column) => (
              <td
                key={column.label}
                data-label={column.label}
                className={column.className}
                title={column.title?.(item)}
              >
                {column.cell(item)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
