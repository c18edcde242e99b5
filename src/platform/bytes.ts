/** Sizes as operators write them (`2g`, `512m`, `2GiB`) and as messages say them (`2 GiB`). */

const UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };

/** `2g`, `512m`, `2GiB`, `1073741824`: bytes, or undefined when it is not a size. Units are powers of 1024. */
export function parseBytes(raw: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*$/i.exec(raw);
  if (!match) return undefined;
  const bytes = Math.round(Number(match[1]) * UNITS[match[2]!.toLowerCase()]!);
  return bytes > 0 ? bytes : undefined;
}

/** `2 GiB`, `512 MiB`: how a limit is said in messages and on the timeline. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['TiB', 1024 ** 4],
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size) {
      const value = bytes / size;
      return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
    }
  }
  return `${bytes} bytes`;
}
