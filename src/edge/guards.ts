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

/**
 * What makes a request unfit under RFC 9112, which Node's parser lets through: a request line without
 * an HTTP version (read as HTTP/0.9), an HTTP/1.1 request without Host, or more than one Host line
 * (Node keeps the first, so two parties could each read another host). Null when none.
 */
export function malformedRequestHead(raw: {
  httpVersionMajor: number;
  httpVersionMinor: number;
  rawHeaders: string[];
}): string | null {
  if (raw.httpVersionMajor !== 1) return 'The request line has no HTTP/1.x version.';
  let hosts = 0;
  for (let i = 0; i < raw.rawHeaders.length; i += 2) {
    if ((raw.rawHeaders[i] as string).toLowerCase() === 'host') hosts++;
  }
  if (hosts > 1) return 'The request has more than one Host header line.';
  if (hosts === 0 && raw.httpVersionMinor >= 1) return 'An HTTP/1.1 request needs a Host header.';
  return null;
}
