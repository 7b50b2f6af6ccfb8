// A tiny history-API router: the gateway answers every /dashboard/... path with index.html.
import { useEffect, useState } from "react";

const BASE = "/dashboard";
const listeners = new Set<() => void>();

export function currentPath(): string {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : "/";
  return path === "" ? "/" : path;
}

/** Goes to a path; `replace` takes the current entry's place in the history (a used link must not stay there). */
export function navigate(path: string, options: { replace?: boolean } = {}): void {
  const url = `${BASE}${path === "/" ? "" : path}`;
  if (options.replace) window.history.replaceState(null, "", url);
  else window.history.pushState(null, "", url);
  for (const listener of listeners) listener();
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const update = () => setPath(currentPath());
    listeners.add(update);
    window.addEventListener("popstate", update);
    return () => {
      listeners.delete(update);
      window.removeEventListener("popstate", update);
    };
  }, []);
  return path;
}
