/**
 * Kubernetes resource quantities (`512Mi`, `1G`, `500m`, `0.5`, `2e3`) as numbers, for mapping a container's
 * limits to the container engine's: memory in bytes, CPU in cores.
 */
const SUFFIXES: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

export function parseQuantity(text: string | number): number {
  if (typeof text === 'number') return text;
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$/.exec(text.trim());
  if (!match) throw new Error(`not a Kubernetes quantity: ${JSON.stringify(text)}`);
  return Number(match[1]) * (SUFFIXES[match[2] ?? '']! ?? 1);
}
