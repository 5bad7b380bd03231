/** Refusals of a URL before any credential is read: escapes the router or the query parser would misread. */

/**
 * Whether the query string has a %-escape that is malformed or not UTF-8. The query parser decodes such
 * an escape leniently (as the literal text, or U+FFFD), which would read, and charge, for a filter value
 * the client never meant; the router already refuses the same in the path.
 */
export function brokenQueryEscape(url: string): boolean {
  const start = url.indexOf('?');
  if (start < 0 || url.indexOf('%', start) < 0) return false;
  try {
    decodeURIComponent(url.slice(start + 1));
    return false;
  } catch {
    return true;
  }
}

/**
 * Whether the path holds an escaped control character (%00-%1F, %7F): no key, account, dataset or
 * recipe is named so, and PostgreSQL refuses a NUL in text outright.
 */
export function controlInPath(url: string): boolean {
  const end = url.indexOf('?');
  const path = end < 0 ? url : url.slice(0, end);
  if (path.indexOf('%') < 0) return false;
  try {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
    return /[\u0000-\u001f\u007f]/.test(decodeURIComponent(path));
  } catch {
    return false; // a broken escape: the router refuses it
  }
}
