// History-API routing: every page has its own address (`/runs/ID`), which the server
// answers with the app (its SPA fallback).

export type Route =
  | { page: "runs" }
  | { page: "run"; id: string }
  | { page: "workloads" }
  | { page: "sessions"; id?: string }
  | { page: "evals" }
  | { page: "missing"; path: string };

export function parse(path: string): Route {
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0) return { page: "runs" };
  const [head, id, ...rest] = parts;
  if (rest.length === 0) {
    if (head === "runs") return id ? { page: "run", id } : { page: "runs" };
    if (head === "sessions") return { page: "sessions", id };
    if (head === "workloads" && !id) return { page: "workloads" };
    if (head === "evals" && !id) return { page: "evals" };
  }
  return { page: "missing", path };
}

let current = $state<Route>(parse(location.pathname));

export function route(): Route {
  return current;
}

export function navigate(href: string) {
  if (href === location.pathname + location.search) return;
  history.pushState(null, "", href);
  current = parse(location.pathname);
}

addEventListener("popstate", () => {
  current = parse(location.pathname);
});

/** Same-origin link clicks navigate in the app instead of reloading it. */
export function onLinkClick(event: MouseEvent) {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
  const anchor = (event.target as Element | null)?.closest?.("a");
  if (!anchor || anchor.target || anchor.origin !== location.origin || anchor.hasAttribute("download")) return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}
