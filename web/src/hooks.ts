import { useCallback, useEffect, useRef, useState } from 'react';

export interface Resource<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again; the data shown stays until the answer arrives. */
  reload(): Promise<void>;
  setData(update: (current: T | undefined) => T | undefined): void;
}

/**
 * Loads `load()` now and whenever `key` changes; with `pollMs`, again every `pollMs` while the page is visible
 * (how lists follow state changes). A failed poll keeps the last data and shows the error.
 */
export function useResource<T>(
  load: (signal: AbortSignal) => Promise<T>,
  key: string,
  options: { pollMs?: number } = {},
): Resource<T> {
  const [data, setDataState] = useState<T>();
  const [error, setError] = useState<unknown>();
  const [loading, setLoading] = useState(true);
  const loadRef = useRef(load);
  loadRef.current = load;
  const current = useRef<AbortController | undefined>(undefined);
  const inFlight = useRef(false);

  const fetchNow = useCallback(async (initial: boolean) => {
    current.current?.abort();
    const abort = new AbortController();
    current.current = abort;
    inFlight.current = true;
    if (initial) setLoading(true);
    try {
      const value = await loadRef.current(abort.signal);
      if (abort.signal.aborted) return;
      setDataState(value);
      setError(undefined);
    } catch (caught) {
      if (abort.signal.aborted || (caught instanceof DOMException && caught.name === 'AbortError')) return;
      setError(caught);
    } finally {
      if (!abort.signal.aborted) {
        inFlight.current = false;
        setLoading(false);
      }
    }
  }, []);

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new key is what starts a fresh fetch
  useEffect(() => {
    setDataState(undefined);
    void fetchNow(true);
    return () => current.current?.abort();
  }, [key, fetchNow]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: polling restarts for a new key
  useEffect(() => {
    if (!options.pollMs) return;
    const timer = setInterval(() => {
      // A slow answer is waited for rather than replaced by the next poll.
      if (document.visibilityState === 'visible' && !inFlight.current) void fetchNow(false);
    }, options.pollMs);
    return () => clearInterval(timer);
  }, [key, options.pollMs, fetchNow]);

  const reload = useCallback(() => fetchNow(false), [fetchNow]);
  const setData = useCallback((update: (value: T | undefined) => T | undefined) => setDataState(update), []);
  return { data, error, loading, reload, setData };
}

export interface Action {
  pending: boolean;
  error: unknown;
  /** Runs `work`, keeping its error to show; resolves to its result, or undefined when it failed. */
  run<T>(work: () => Promise<T>): Promise<T | undefined>;
  clear(): void;
}

/** State of a button's or form's request: pending while it runs, the error when it failed. */
export function useAction(): Action {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<unknown>();
  const run = useCallback(async <T>(work: () => Promise<T>) => {
    setPending(true);
    setError(undefined);
    try {
      return await work();
    } catch (caught) {
      setError(caught);
      return undefined;
    } finally {
      setPending(false);
    }
  }, []);
  const clear = useCallback(() => setError(undefined), []);
  return { pending, error, run, clear };
}
