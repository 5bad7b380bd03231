/** A small History-API router under /terminal/: a page is a component per path pattern. */
import type { AnchorHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/terminal';

let listeners: (() => void)[] = [];

/** The path inside the Terminal (/explorer), without the base, and its query string. */
export function currentLocation(): { path: string; search: string } {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || '/' : '/';
  return { path, search: location.search };
}

export function navigate(to: string, replace = false): void {
  const url = to.startsWith(BASE) ? to : `${BASE}${to}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
  window.scrollTo(0, 0);
}

export function useLocation(): { path: string; search: string } {
  const [loc, setLoc] = useState(currentLocation);
  useEffect(() => {
    const update = () => setLoc(currentLocation());
    listeners.push(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners = listeners.filter((l) => l !== update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return loc;
}

/** Matches `/dataset/:domain/:name` against a path; params come back decoded. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/');
  const s = path.replace(/\/+$/, '').split('/');
  if (p.length !== s.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const part = p[i] as string;
    const seg = s[i] as string;
    if (part.startsWith(':')) {
      try {
        params[part.slice(1)] = decodeURIComponent(seg);
      } catch {
        return null;
      }
    } else if (part !== seg) return null;
  }
  return params;
}

/** An in-app link: the browser's own anchor (keyboard, middle click), routed without a reload. */
export function Link(props: AnchorHTMLAttributes & { href: string; children: ComponentChildren }) {
  const { href, children, ...rest } = props;
  const onClick = (event: MouseEvent) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a {...rest} href={`${BASE}${href}`} onClick={onClick}>
      {children}
    </a>
  );
}
