// Small shared pieces: links that use the client router, an alert for API errors, a data loader.
import { useCallback, useEffect, useState, type MouseEvent, type ReactNode } from "react";
import { describeError } from "./api";
import { formatMoney, moneyExact, moneyHidesDigits } from "./format";
import { navigate } from "./router";

export { formatCount, formatDate, formatMoney } from "./format";

export function Link(props: { to: string; children: ReactNode; current?: boolean }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(props.to);
  };
  return (
    <a href={`/dashboard${props.to === "/" ? "" : props.to}`} onClick={onClick} aria-current={props.current ? "page" : undefined}>
      {props.children}
    </a>
  );
}

export function ErrorText(props: { error: unknown }) {
  if (!props.error) return null;
  return (
    <p className="error" role="alert">
      {describeError(props.error)}
    </p>
  );
}

export function Notice(props: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {props.children}
    </p>
  );
}

/** Loads data on mount (and on reload()); keeps the last good value while reloading. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): { data: T | null; error: unknown; reload: () => void } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the caller names load's dependencies in deps
  const run = useCallback(load, deps);
  useEffect(() => {
    let live = true;
    run().then(
      (value) => live && (setData(value), setError(null)),
      (err: unknown) => live && setError(err),
    );
    return () => {
      live = false;
    };
  }, [run, tick]);
  return { data, error, reload: () => setTick((t) => t + 1) };
}

/**
 * State for a page's write actions: run(action, done) clears the last message, runs the action,
 * then shows `done` and calls `afterSuccess` (typically reloads), or shows the API's error.
 */
export function useAction(afterSuccess: () => void): { error: unknown; status: string | null; run: (action: () => Promise<unknown>, done: string) => Promise<boolean> } {
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState<string | null>(null);
  /** Resolves true when the action succeeded (a form keeps what was typed otherwise). */
  async function run(action: () => Promise<unknown>, done: string): Promise<boolean> {
    setError(null);
    setStatus(null);
    try {
      await action();
      setStatus(done);
      afterSuccess();
      return true;
    } catch (err) {
      setError(err);
      return false;
    }
  }
  return { error, status, run };
}

/** Money as formatMoney writes it, with the exact amount in a tooltip when rounding hid digits. */
export function Money(props: { usd: string; testId?: string }) {
  return (
    <span className="money" title={moneyHidesDigits(props.usd) ? `${moneyExact(props.usd)} exactly` : undefined} data-testid={props.testId}>
      {formatMoney(props.usd)}
    </span>
  );
}

/** A wide table that scrolls sideways on a narrow screen; focusable so a keyboard can scroll it. */
export function TableScroll(props: { label: string; children: ReactNode }) {
  return (
    <div className="table-scroll" role="region" aria-label={props.label} tabIndex={0}>
      {props.children}
    </div>
  );
}
