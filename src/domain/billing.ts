/**
 * Buying tokens (docs/billing.md): token packs at the configured price, paid through Stripe Checkout
 * when the operator configured it (the Payments port), else requested and settled by an operator.
 * A payment credits its wallet once (a ledger entry of kind purchase per payment intent); a refund
 * takes back what it covers from what the wallet still holds, never below zero, and records the rest.
 */
import type { ServiceFile } from '../config.ts';
import { AppError } from '../errors.ts';
import type { Ledger, TokenPurchase, TokenRequest } from '../store/port.ts';
import type { Caller } from './caller.ts';
import { newId } from './ids.ts';

/** Where the Terminal sells tokens: the link a 402 insufficient_tokens carries. */
export const BUY_PATH = '/terminal/wallet#buy';

export interface TokenPack {
  id: string;
  tokens: number;
  /** The price in euro cents: tokens × eur_per_token. */
  priceCents: number;
}

export interface CheckoutRequest {
  pack: TokenPack;
  currency: 'eur';
  accountId: string;
  walletId: string;
  email: string | null;
  successUrl: string;
  cancelUrl: string;
}

/** What a verified webhook says, in the service's terms. */
export type PaymentEvent =
  | {
      type: 'paid';
      sessionId: string;
      paymentIntent: string;
      accountId: string;
      walletId: string;
      packId: string;
      tokens: number;
      amountCents: number;
      currency: string;
      receiptUrl: string | null;
    }
  | { type: 'refunded'; paymentIntent: string; chargeId: string; amountCents: number; refundedCents: number }
  | { type: 'ignored'; eventType: string };

/** A payment provider (Stripe): checkout sessions out, signed events in. */
export interface Payments {
  createCheckout(request: CheckoutRequest): Promise<{ id: string; url: string }>;
  /** The event of a webhook delivery; throws when its signature does not verify or it is stale. */
  readEvent(rawBody: string, signature: string | undefined): PaymentEvent;
  /** The receipt of a payment (its charge's receipt page), null when there is none yet. */
  receiptUrl(paymentIntent: string): Promise<string | null>;
}

export class PaymentSignatureError extends Error {
  override name = 'PaymentSignatureError';
}

interface BillingDeps {
  store: Ledger;
  config: ServiceFile;
  payments: Payments | null;
  now: () => number;
}

export class Billing {
  readonly #deps: BillingDeps;

  constructor(deps: BillingDeps) {
    this.#deps = deps;
  }

  /** Whether Stripe Checkout is configured (else tokens are requested). */
  get live(): boolean {
    return this.#deps.payments !== null;
  }

  packs(): TokenPack[] {
    const { token_packs: packs, eur_per_token: eur } = this.#deps.config.pricing;
    return packs.map((p) => ({ id: p.id, tokens: p.tokens, priceCents: Math.round(p.tokens * eur * 100) }));
  }

  #pack(id: string): TokenPack {
    const pack = this.packs().find((p) => p.id === id);
    if (!pack)
      throw new AppError(
        'not_found',
        `No token pack "${id}". Packs: ${this.packs()
          .map((p) => p.id)
          .join(', ')}.`,
      );
    return pack;
  }

  #account(caller: Caller) {
    const account = caller.account;
    if (!account)
      throw new AppError(
        'forbidden',
        'Tokens are bought for an account: sign in, or use a live key of the account.',
      );
    return account;
  }

  /** A Stripe Checkout session for a pack, paid on Stripe's page; the webhook credits the wallet. */
  async checkout(caller: Caller, packId: string, returnTo: string): Promise<{ id: string; url: string }> {
    const account = this.#account(caller);
    const pack = this.#pack(packId);
    const payments = this.#deps.payments;
    if (!payments)
      throw new AppError(
        'not_live',
        'Card payments are not configured on this service: request the tokens instead (POST /api/v1/billing/token-requests) and an operator credits them.',
      );
    return payments.createCheckout({
      pack,
      currency: 'eur',
      accountId: account.id,
      walletId: account.walletId,
      email: account.email,
      successUrl: `${returnTo}?purchase=done&session={CHECKOUT_SESSION_ID}`,
      cancelUrl: `${returnTo}?purchase=cancelled`,
    });
  }

  /**
   * A webhook delivery: verified, then applied once. A refund of a payment not yet known (events out
   * of order) is a conflict, which Stripe delivers again later.
   */
  async webhook(rawBody: string, signature: string | undefined): Promise<{ applied: string }> {
    const payments = this.#deps.payments;
    if (!payments) throw new AppError('not_found', 'Card payments are not configured on this service.');
    let event: PaymentEvent;
    try {
      event = payments.readEvent(rawBody, signature);
    } catch (error) {
      throw new AppError(
        'invalid_signature',
        `The webhook's signature does not verify: ${(error as Error).message}`,
      );
    }
    const { store, now } = this.#deps;
    if (event.type === 'ignored') return { applied: `ignored ${event.eventType}` };
    if (event.type === 'paid') {
      // The receipt is the charge's: asked for once, and the purchase is credited without it if Stripe
      // does not answer (the buyer also gets it by email from Stripe).
      const receiptUrl =
        event.receiptUrl ?? (await payments.receiptUrl(event.paymentIntent).catch(() => null));
      const { duplicate } = await store.recordPurchase({
        paymentIntent: event.paymentIntent,
        sessionId: event.sessionId,
        accountId: event.accountId,
        walletId: event.walletId,
        packId: event.packId,
        tokens: event.tokens,
        amountCents: event.amountCents,
        currency: event.currency,
        receiptUrl,
        createdAt: now(),
      });
      return { applied: duplicate ? 'already credited' : `credited ${event.tokens} tokens` };
    }
    const purchase = await store.purchaseByPaymentIntent(event.paymentIntent);
    if (!purchase)
      throw new AppError(
        'conflict',
        `No purchase with payment ${event.paymentIntent} yet: deliver the event again later.`,
      );
    // Stripe states the total refunded so far: the tokens it covers, less what earlier refunds took.
    const covered = Math.floor(
      (purchase.tokens * Math.min(event.refundedCents, purchase.amountCents)) / purchase.amountCents,
    );
    const tokens = covered - purchase.reclaimedTokens;
    if (tokens <= 0) return { applied: 'nothing more to take back' };
    const reclaimed = await store.reclaimPurchase({
      paymentIntent: event.paymentIntent,
      refundKey: `stripe-refund:${event.chargeId}:${event.refundedCents}`,
      tokens,
      at: now(),
    });
    return {
      applied: reclaimed.duplicate
        ? 'already taken back'
        : `took back ${reclaimed.takenMicros / 1_000_000n} tokens${reclaimed.shortfallMicros > 0n ? ` (the wallet lacked ${reclaimed.shortfallMicros} micro-tokens)` : ''}`,
    };
  }

  purchases(caller: Caller): Promise<TokenPurchase[]> {
    return this.#deps.store.listPurchases(this.#account(caller).id);
  }

  /** Tokens asked for without a card: an operator credits or declines the request. */
  async requestTokens(caller: Caller, packId: string, note: string | null): Promise<TokenRequest> {
    const account = this.#account(caller);
    const pack = this.#pack(packId);
    const open = await this.#deps.store.listTokenRequests({ accountId: account.id, status: 'open' }, 10);
    if (open.length >= 5)
      throw new AppError(
        'conflict',
        'This account has 5 open token requests: wait for an operator to settle them.',
      );
    return this.#deps.store.createTokenRequest({
      id: newId('treq'),
      accountId: account.id,
      walletId: account.walletId,
      packId: pack.id,
      tokens: pack.tokens,
      note,
      createdAt: this.#deps.now(),
    });
  }

  myRequests(caller: Caller): Promise<TokenRequest[]> {
    return this.#deps.store.listTokenRequests({ accountId: this.#account(caller).id }, 50);
  }

  openRequests(): Promise<TokenRequest[]> {
    return this.#deps.store.listTokenRequests({ status: 'open' }, 200);
  }

  /** An operator settles a request: its tokens credited (once), or declined with a reason. */
  async settle(
    id: string,
    decision: { credit: true; actor: string } | { credit: false; reason: string },
  ): Promise<TokenRequest> {
    const at = this.#deps.now();
    const settled = await this.#deps.store.settleTokenRequest(
      id,
      decision.credit
        ? { status: 'credited', at, memo: `token request ${id}, credited by ${decision.actor}` }
        : { status: 'declined', at, reason: decision.reason },
    );
    if (settled) return settled;
    const found = await this.#deps.store.getTokenRequest(id);
    if (!found) throw new AppError('not_found', `No token request "${id}".`);
    throw new AppError('conflict', `Token request ${id} is ${found.status} already.`);
  }
}
