/**
 * The Payments port on Stripe (the official `stripe` package): Checkout Sessions in payment mode for a
 * token pack, and webhook events verified with the endpoint's signing secret (Stripe's own check:
 * HMAC-SHA256 over the timestamped payload, at most 5 minutes old).
 */
import Stripe from 'stripe';
import type { CheckoutRequest, PaymentEvent, Payments } from '../domain/billing.ts';

const TOLERANCE_SECONDS = 300;

export interface StripeOptions {
  secretKey: string;
  webhookSecret: string;
  /** Another API address (a test server), as http(s)://host:port. */
  apiUrl?: string;
}

const idOf = (value: string | { id: string } | null | undefined): string | null =>
  value === null || value === undefined ? null : typeof value === 'string' ? value : value.id;

export class StripePayments implements Payments {
  readonly #stripe: Stripe;
  readonly #webhookSecret: string;

  constructor(options: StripeOptions) {
    const api = options.apiUrl ? new URL(options.apiUrl) : null;
    this.#stripe = new Stripe(options.secretKey, {
      maxNetworkRetries: 2,
      timeout: 20_000,
      ...(api
        ? {
            host: api.hostname,
            port: api.port || undefined,
            protocol: api.protocol.replace(':', '') as 'http' | 'https',
          }
        : {}),
    });
    this.#webhookSecret = options.webhookSecret;
  }

  async createCheckout(request: CheckoutRequest): Promise<{ id: string; url: string }> {
    const metadata = {
      account_id: request.accountId,
      wallet_id: request.walletId,
      pack_id: request.pack.id,
      tokens: String(request.pack.tokens),
    };
    const session = await this.#stripe.checkout.sessions.create({
      mode: 'payment',
      line_items: [
        {
          quantity: 1,
          price_data: {
            currency: request.currency,
            unit_amount: request.pack.priceCents,
            product_data: { name: `${request.pack.tokens.toLocaleString('en')} tokens` },
          },
        },
      ],
      client_reference_id: request.accountId,
      ...(request.email ? { customer_email: request.email } : {}),
      metadata,
      payment_intent_data: { metadata },
      success_url: request.successUrl,
      cancel_url: request.cancelUrl,
    });
    if (!session.url) throw new Error(`Stripe answered checkout session ${session.id} without a URL`);
    return { id: session.id, url: session.url };
  }

  async receiptUrl(paymentIntent: string): Promise<string | null> {
    const intent = await this.#stripe.paymentIntents.retrieve(paymentIntent, { expand: ['latest_charge'] });
    const charge = intent.latest_charge;
    return charge !== null && typeof charge === 'object' ? (charge.receipt_url ?? null) : null;
  }

  readEvent(rawBody: string, signature: string | undefined): PaymentEvent {
    if (!signature) throw new Error('no Stripe-Signature header');
    const event = this.#stripe.webhooks.constructEvent(
      rawBody,
      signature,
      this.#webhookSecret,
      TOLERANCE_SECONDS,
    );
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded': {
        const session = event.data.object;
        const meta = session.metadata ?? {};
        const paymentIntent = idOf(session.payment_intent);
        const tokens = Number(meta.tokens);
        if (session.payment_status !== 'paid' || !paymentIntent || !meta.wallet_id || !meta.account_id)
          return { type: 'ignored', eventType: `${event.type} (${session.payment_status})` };
        if (!Number.isSafeInteger(tokens) || tokens <= 0)
          throw new Error(`session ${session.id} names no tokens`);
        return {
          type: 'paid',
          sessionId: session.id,
          paymentIntent,
          accountId: meta.account_id,
          walletId: meta.wallet_id,
          packId: meta.pack_id ?? 'unknown',
          tokens,
          amountCents: session.amount_total ?? 0,
          currency: session.currency ?? 'eur',
          receiptUrl: null,
        };
      }
      case 'charge.refunded': {
        const charge = event.data.object;
        const paymentIntent = idOf(charge.payment_intent);
        if (!paymentIntent) return { type: 'ignored', eventType: `${event.type} (no payment intent)` };
        return {
          type: 'refunded',
          paymentIntent,
          chargeId: charge.id,
          amountCents: charge.amount,
          refundedCents: charge.amount_refunded,
        };
      }
      default:
        return { type: 'ignored', eventType: event.type };
    }
  }
}
