/** JSON request bodies, parsed as Fastify's own parser does, refusing keys that reach a prototype. */
import { errorCodes } from 'fastify';

/**
 * A JSON body with a key that would reach an object's prototype (`__proto__`, or `constructor` holding
 * `prototype`): refused, as Fastify's own parser refuses it, but said as such rather than "not JSON".
 */
export class ForbiddenJsonKey extends Error {
  readonly code = 'TMD_FORBIDDEN_JSON_KEY';
  readonly statusCode = 400;
}

/** Walks a parsed body (without recursion: bodies may nest thousands deep) for a forbidden key. */
function refuseForbiddenKeys(root: unknown): void {
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    for (const key of Object.keys(node)) {
      const child = (node as Record<string, unknown>)[key];
      const prototypeHolder =
        key === 'constructor' &&
        child !== null &&
        typeof child === 'object' &&
        Object.hasOwn(child, 'prototype');
      if (key === '__proto__' || prototypeHolder) {
        throw new ForbiddenJsonKey('the body holds a __proto__ or constructor.prototype key');
      }
      stack.push(child);
    }
  }
}

/**
 * JSON bodies, as Fastify's own parser takes them; only a body whose text could name a forbidden key
 * (literally, or behind a \u escape) is walked for one.
 */
export function parseJsonBody(text: string): unknown {
  // A leading byte order mark is not part of the JSON (Fastify's own parser drops it too).
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body === '') throw new errorCodes.FST_ERR_CTP_EMPTY_JSON_BODY();
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new errorCodes.FST_ERR_CTP_INVALID_JSON_BODY();
  }
  if (body.includes('"__proto__"') || body.includes('"constructor"') || body.includes('\\u')) {
    refuseForbiddenKeys(value);
  }
  return value;
}
