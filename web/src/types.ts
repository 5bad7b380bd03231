/** The API's answers as the Terminal uses them (see the OpenAPI document at /api/v1/openapi.json). */

export interface Me {
  credential: {
    kind: 'sandbox' | 'public_test' | 'live' | 'session';
    key_id: string | null;
    expires_at: string | null;
  };
  account: {
    id: string;
    email: string | null;
    plan: string;
    package: string | null;
    entitlements: {
      bulk_export: boolean;
      analysis_assistant: boolean;
      mcp_included: boolean;
      spending_caps: boolean;
    };
    created_at: string;
    /** The low-balance threshold, tokens, or null. */
    low_balance: string | null;
  } | null;
  wallet: { id: string; balance: string };
  burned_this_month: string;
  tier: Tier;
  next_tier: (Tier & { tokens_needed: string }) | null;
  limits: { per_minute: number; per_day: number | null; concurrent: number; ip_fence: boolean };
}

export interface Tier {
  level: number;
  name: string;
  medal?: string;
  min_tokens?: number;
  discount_pct: number;
  rate_limit?: number;
  benefits?: string[];
}

export interface CatalogEntry {
  key: string;
  domain: string;
  name: string;
  title: string;
  description: string;
  source: string;
  frequency: string;
  list_cost: number;
  p0: boolean;
  canonical_key: string;
  aliases: string[];
  time_field: string;
  entity_fields: string[];
}

export interface Field {
  name: string;
  type: 'string' | 'integer' | 'number' | 'date' | 'datetime' | 'boolean';
  unit: string | null;
  description: string;
}

export interface Dataset extends CatalogEntry {
  fields: Field[];
  example: string;
}

export interface Price {
  key: string;
  list_cost: number;
  p0: boolean;
  terminal_cost: string;
  api_key_cost: string;
  entitled: boolean;
  data_source: 'sample' | 'imported' | 'none_yet';
  fields: string[];
}

export interface Estimate {
  target: string;
  list_cost: string;
  token_cost: string;
  tokens_burned: string;
  cost_eur: string;
  entitled: boolean;
  balance: string;
  balance_after: string;
  would_refuse: 'not_entitled' | 'insufficient_tokens' | 'spending_cap_reached' | null;
  refusal_detail?: string | null;
}

export type Row = Record<string, string | number | boolean | null>;

export interface ReadPage {
  data: Row[];
  meta: {
    dataset: string;
    count: number;
    next_cursor: string | null;
    fields: string[];
    time_field: string;
    sample: boolean;
    notice?: string;
    /** Where the rows came from: generated samples, published files, or the service's own records. */
    source?: {
      kind: 'sample' | 'import' | 'records';
      imports: {
        publisher: string;
        file: string;
        imported_at: string;
        licence: string;
        attribution: string | null;
      }[];
    };
    /** The dataset's newest observation. */
    as_of?: string | null;
    cost: {
      list_tokens: string;
      token_cost: string;
      tokens_burned: string;
      credits_remaining: string;
      outcome: string;
    };
  };
}

export interface Key {
  id: string;
  kind: 'sandbox' | 'public_test' | 'live';
  prefix: string;
  name: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  status: 'active' | 'expired' | 'revoked';
  last_used_at?: string | null;
}

export interface LedgerEntry {
  id: string;
  kind: string;
  amount: string;
  balance_after: string;
  created_at: string;
  memo: string | null;
  request_id: string | null;
}

export interface UsageSummary {
  since: string;
  days: {
    date: string;
    tokens_burned: Record<'rest' | 'mcp' | 'terminal', string>;
    reads: Record<'rest' | 'mcp' | 'terminal', number>;
  }[];
  top_datasets: { dataset: string; tokens_burned: string; reads: number }[];
  partial: boolean;
}

export interface Sku {
  id: string;
  name: string;
  monthly_credits: number | null;
  rate_limit_per_minute?: number;
  bulk_export?: boolean;
  analysis_assistant?: boolean;
  mcp_included?: boolean;
  notes?: string[] | string;
  [more: string]: unknown;
}

export interface Pricing {
  eur_per_token: number;
  terminal_surcharge_percent: number;
  commercial_skus: Sku[];
  loyalty_tiers: Tier[];
  [more: string]: unknown;
}

export interface TokenPack {
  id: string;
  tokens: number;
  price_eur: string;
}

export interface Purchase {
  payment_id: string;
  checkout_session: string;
  pack: string;
  tokens: number;
  amount: string;
  currency: string;
  purchased_at: string;
  ledger_entry_id: string;
  refunded_tokens: number;
  not_recovered: string;
  receipt_url: string | null;
}

export interface TokenRequest {
  id: string;
  pack: string;
  tokens: number;
  note: string | null;
  status: 'open' | 'credited' | 'declined';
  reason: string | null;
  requested_at: string;
  settled_at: string | null;
}
