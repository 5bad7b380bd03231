/**
 * The operator's outgoing webhook for notices (ALERT_WEBHOOK_URL): each event POSTed as JSON with
 * `Tmd-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" with ALERT_WEBHOOK_SECRET>`
 * (the scheme Stripe's webhooks use), retried with exponential backoff until a 2xx, in the background.
 */
import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Alerts, BalanceLowEvent } from '../domain/alerts.ts';

export function signature(secret: string, body: string, at: number): string {
  const t = Math.floor(at / 1000);
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

export class WebhookAlerts implements Alerts {
  readonly #url: string;
  readonly #secret: string;
  readonly #attempts: number;
  readonly #backoffMs: number;
  readonly #onFailure: (error: string) => void;

  constructor(options: {
    url: string;
    secret: string;
    attempts?: number;
    backoffMs?: number;
    onFailure?: (error: string) => void;
  }) {
    this.#url = options.url;
    this.#secret = options.secret;
    this.#attempts = options.attempts ?? 6;
    this.#backoffMs = options.backoffMs ?? 1_000;
    this.#onFailure = options.onFailure ?? (() => {});
  }

  send(event: BalanceLowEvent): void {
    void this.#deliver(event);
  }

  async #deliver(event: BalanceLowEvent): Promise<void> {
    const body = JSON.stringify(event);
    let last = '';
    for (let attempt = 0; attempt < this.#attempts; attempt++) {
      if (attempt > 0) await sleep(this.#backoffMs * 2 ** (attempt - 1));
      try {
        const response = await fetch(this.#url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'tmd-signature': signature(this.#secret, body, Date.now()),
          },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        await response.arrayBuffer();
        if (response.ok) return;
        last = `HTTP ${response.status}`;
      } catch (error) {
        last = (error as Error).message;
      }
    }
    this.#onFailure(
      `${event.type} for ${event.account_id} not delivered after ${this.#attempts} attempts: ${last}`,
    );
  }
}
