/**
 * Limits at the edge, after authentication: the IP fence, per-minute, per-day and in-flight limits of
 * the caller (DECISIONS "Limits"), checked in one atomic Limiter.admit. Every limited response carries
 * the IETF RateLimit-Policy / RateLimit headers, refusals included.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../domain/caller.ts';
import { clientNetwork } from '../domain/client-network.ts';
import { limitSubject, limitsFor } from '../domain/limits-policy.ts';
import { AppError } from '../errors.ts';
import type { HeldSlot } from '../limits/held-slots.ts';
import type { AdmitRequest, WindowCheck, WindowState } from '../limits/port.ts';
import type { EdgeServices } from '../services.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

declare module 'fastify' {
  interface FastifyRequest {
    limitSlot: HeldSlot | null;
  }
  interface FastifyContextConfig {
    /** false: not limited (health checks). */
    limits?: boolean;
  }
}

const policyNames: Record<WindowCheck['code'], string> = {
  ip_fence: 'ip',
  rate_limited: 'minute',
  daily_limit: 'day',
};

function nextUtcMidnight(now: number): number {
  return (Math.floor(now / DAY_MS) + 1) * DAY_MS;
}

export function admissionFor(
  deps: EdgeServices,
  caller: Caller | null,
  ip: string,
  now: number,
): AdmitRequest {
  const windows: WindowCheck[] = [];
  const fence = {
    code: 'ip_fence',
    key: `ip:${clientNetwork(ip)}`,
    limit: deps.config.limits.ip_fence_per_minute,
    windowMs: MINUTE_MS,
  } as const;
  if (!caller) return { now, windows: [fence] };
  const limits = limitsFor(deps.config, deps.pricing, caller, now);
  const subject = limitSubject(caller);
  if (limits.ip_fence) windows.push(fence);
  windows.push({
    code: 'rate_limited',
    key: `min:${subject}`,
    limit: limits.per_minute,
    windowMs: MINUTE_MS,
  });
  if (limits.per_day !== null) {
    windows.push({
      code: 'daily_limit',
      key: `day:${subject}`,
      limit: limits.per_day,
      windowMs: DAY_MS,
      fixedUntil: nextUtcMidnight(now),
    });
  }
  return {
    now,
    windows,
    slot: {
      key: `slot:${subject}`,
      max: limits.concurrent,
      leaseMs: deps.config.limits.slot_lease_seconds * 1000,
    },
  };
}

function setRateLimitHeaders(
  reply: FastifyReply,
  checks: readonly WindowCheck[],
  states: readonly WindowState[],
): void {
  if (states.length === 0) return;
  reply.header(
    'ratelimit-policy',
    checks
      .map(
        (c) =>
          `"${policyNames[c.code]}";q=${c.limit};w=${Math.round((c.fixedUntil ? DAY_MS : c.windowMs) / 1000)}`,
      )
      .join(', '),
  );
  reply.header(
    'ratelimit',
    states
      .map((s) => `"${policyNames[s.code]}";r=${s.remaining};t=${Math.ceil(s.resetMs / 1000)}`)
      .join(', '),
  );
}

const refusals = {
  ip_fence: (limit: number) =>
    `More than ${limit} requests a minute from this IP address. A registered key skips this fence.`,
  rate_limited: (limit: number) => `More than ${limit} requests a minute on this credential.`,
  daily_limit: (limit: number) => `The daily limit of ${limit} requests (UTC day) is reached.`,
  concurrency_limit: (limit: number) => `At most ${limit} requests in flight on this credential.`,
} as const;

export async function applyLimits(
  deps: EdgeServices,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  if (request.routeOptions.config.limits === false) return;
  // A client that hung up has no address left (request.ip is undefined): it counts as one unknown client.
  const admission = admissionFor(deps, request.caller, request.ip ?? '', deps.now());
  const result = await deps.limiter.admit(admission);
  setRateLimitHeaders(reply, admission.windows, result.windows);
  if (!result.allowed) {
    const retryAfter = Math.max(1, Math.ceil(result.retryAfterMs / 1000));
    const limit =
      result.code === 'concurrency_limit'
        ? (admission.slot?.max ?? 0)
        : (admission.windows.find((w) => w.code === result.code)?.limit ?? 0);
    throw new AppError(
      result.code,
      refusals[result.code](limit),
      { retry_after: retryAfter },
      { 'retry-after': String(retryAfter) },
    );
  }
  if (result.slotId && admission.slot) {
    request.limitSlot = deps.slots.hold(
      admission.slot.key,
      result.slotId,
      admission.slot.leaseMs,
      admission.now,
    );
    // The response's close event fires when it has been sent and when the client went away first;
    // a client that went away while the credential or the admission was awaited closed it already.
    if (reply.raw.destroyed || request.raw.destroyed || reply.raw.writableEnded) releaseSlot(deps, request);
    else reply.raw.once('close', () => releaseSlot(deps, request));
  }
}

/** Gives the in-flight slot back once, whether the request completed, failed or was aborted. */
export function releaseSlot(deps: EdgeServices, request: FastifyRequest): void {
  const slot = request.limitSlot;
  if (!slot) return;
  request.limitSlot = null;
  deps.slots.release(slot).catch((error: unknown) => {
    request.log.warn({ err: error }, 'could not release an in-flight slot; its lease will expire');
  });
}
