/**
 * The one client of the service's public API. It turns problem+json answers into typed ApiErrors, reads
 * the four cost headers, and sends a 401 back to sign-in (returning to the page afterwards). The session
 * is the HttpOnly cookie the server sets: nothing secret is kept in the page or in storage.
 */

import type { components } from '../../clients/typescript/src/schema.ts';

type ServiceProblem = components['schemas']['Problem'];

/** A problem+json answer, as the OpenAPI document describes it; `unknown` is the Terminal's own code. */
export type Problem = Pick<
  ServiceProblem,
  | 'title'
  | 'status'
  | 'detail'
  | 'retry_after'
  | 'required_tokens'
  | 'balance'
  | 'reset_at'
  | 'suggestions'
  | 'errors'
> &
  Partial<Pick<ServiceProblem, 'type' | 'request_id'>> & {
    code: ServiceProblem['code'] | 'unknown';
    [extra: string]: unknown;
  };

export class ApiError extends Error {
  readonly problem: Problem;
  /** Seconds from Retry-After, when the service sent one. */
  readonly retryAfterS: number | null;

  constructor(problem: Problem, retryAfterS: number | null) {
    super(problem.detail);
    this.problem = problem;
    this.retryAfterS = retryAfterS;
  }

  get status(): number {
    return this.problem.status;
  }

  get code(): Problem['code'] {
    return this.problem.code;
  }
}

/** Input the page refused before calling the service (a JSON typo): shown as such, never as a network fault. */
export class InputError extends Error {}

/**
 * JSON typed by the user, parsed here; a typo is an InputError naming the field and where it is
 * (line and column), so nothing is sent.
 */
export function parseJsonInput(field: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    const position = /at position (\d+)/.exec(message);
    let where = '';
    if (position && !/line \d+/.test(message)) {
      const before = text.slice(0, Number(position[1])).split('\n');
      where = ` (line ${before.length} column ${(before.at(-1)?.length ?? 0) + 1})`;
    }
    throw new InputError(`${field} is not valid JSON: ${message}${where}. Nothing was sent.`);
  }
}

/** The four cost headers of a metered answer (DECISIONS "Cost headers"). */
export interface CostHeaders {
  tokenCost: string;
  tokensBurned: string;
  costEur: string;
  creditsRemaining: string;
}

export interface Answer<T> {
  body: T;
  cost: CostHeaders | null;
  headers: Headers;
}

let onUnauthenticated: (() => void) | null = null;
let onBalance: ((balance: string) => void) | null = null;

/** Where a 401 goes (sign-in), and who hears of a new balance (the header bar). */
export function configureClient(hooks: { unauthenticated: () => void; balance: (b: string) => void }): void {
  onUnauthenticated = hooks.unauthenticated;
  onBalance = hooks.balance;
}

function costOf(headers: Headers): CostHeaders | null {
  const tokenCost = headers.get('x-token-cost');
  if (tokenCost === null) return null;
  return {
    tokenCost,
    tokensBurned: headers.get('x-request-tokens') ?? '0',
    costEur: headers.get('x-request-cost-eur') ?? '0',
    creditsRemaining: headers.get('x-credits-remaining') ?? '',
  };
}

async function problemOf(response: Response): Promise<ApiError> {
  const retryHeader = response.headers.get('retry-after');
  const retryAfterS = retryHeader !== null && /^\d+$/.test(retryHeader) ? Number(retryHeader) : null;
  const body: unknown = await response.json().catch(() => null);
  const problem: Problem =
    typeof body === 'object' && body !== null && typeof (body as Problem).code === 'string'
      ? (body as Problem)
      : {
          title: response.statusText || 'Error',
          status: response.status,
          detail: `The service answered ${response.status} without a problem description.`,
          code: 'unknown',
        };
  return new ApiError(problem, retryAfterS ?? problem.retry_after ?? null);
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';
  body?: unknown;
  /** A key pasted by the user for this request only (never stored): sent instead of the cookie. */
  key?: string;
  accept?: string;
  /** Whether a 401 sends the user to sign-in (not for the sign-in calls themselves). */
  signInOn401?: boolean;
}

async function send(path: string, options: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { accept: options.accept ?? 'application/json' };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  const response = await fetch(path, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? null : JSON.stringify(options.body),
    credentials: options.key ? 'omit' : 'same-origin',
    cache: 'no-store',
  });
  if (!response.ok) {
    const error = await problemOf(response);
    if (response.status === 401 && !options.key && options.signInOn401 !== false) onUnauthenticated?.();
    throw error;
  }
  return response;
}

function noteBalance(cost: CostHeaders | null, options: RequestOptions): void {
  if (cost && !options.key && cost.creditsRemaining !== '') onBalance?.(cost.creditsRemaining);
}

export async function api<T>(path: string, options: RequestOptions = {}): Promise<Answer<T>> {
  const response = await send(path, options);
  const body = (response.status === 204 ? null : await response.json()) as T;
  const cost = costOf(response.headers);
  noteBalance(cost, options);
  return { body, cost, headers: response.headers };
}

/** A text answer (CSV), with its cost headers. */
export async function apiText(path: string, options: RequestOptions = {}): Promise<Answer<string>> {
  const response = await send(path, options);
  const cost = costOf(response.headers);
  noteBalance(cost, options);
  return { body: await response.text(), cost, headers: response.headers };
}

/** What to do about a refusal, in a sentence, by its code. */
export function whatToDo(error: ApiError): string {
  switch (error.code) {
    case 'insufficient_tokens':
      return 'Your wallet cannot pay for this read. Buy tokens on the Wallet page, or read a cheaper dataset.';
    case 'not_entitled':
      return 'This credential may not read this dataset. Free keys (sandbox, public test) read the free (P0) domains only: sign in to the Terminal or use a wallet key.';
    case 'spending_cap_reached':
      return "The key's spending cap is reached; wait for it to reset or raise the cap.";
    case 'rate_limited':
    case 'daily_limit':
    case 'concurrency_limit':
    case 'ip_fence':
    case 'password_reset_limited':
      return 'Too many requests: wait for the countdown, then try again.';
    case 'invalid_reset_token':
      return 'Ask for a new link, then use the newest mail.';
    case 'password_reset_unavailable':
      return "Ask the service's operator to set up mail.";
    case 'service_unavailable':
      return 'The service cannot serve this now. Nothing was charged: try again in a moment.';
    case 'invalid_request':
    case 'invalid_cursor':
      return 'Correct the input the detail names, then send again.';
    case 'key_revoked':
    case 'key_expired':
    case 'invalid_key':
      return 'This key no longer works: create a new one on the Keys page.';
    case 'dataset_not_found':
      return 'Pick a dataset from the catalog.';
    default:
      return error.status >= 500
        ? 'Something failed on the service. Try again; if it persists, quote the request id.'
        : 'Check the request and try again.';
  }
}
