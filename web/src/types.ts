/**
 * The API's answers as the Terminal uses them: named views of the types that openapi-typescript generates
 * from the OpenAPI document (clients/typescript/src/schema.ts, `npm run clients`), never copied by hand.
 */
import type { operations } from '../../clients/typescript/src/schema.ts';

/** The JSON body of an operation's 200 answer. */
type Ok<Id extends keyof operations> = operations[Id]['responses'] extends {
  200: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

/** The JSON body of an operation's 202 answer. */
type Accepted<Id extends keyof operations> = operations[Id]['responses'] extends {
  202: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

/** One item of a listing's `data`. */
type Item<Id extends keyof operations> = Ok<Id> extends { data: (infer One)[] } ? One : never;

export type Me = Ok<'getMe'>;
/** A public-test registration's answer (201 for a new account, 200 for a new key of an existing one). */
export type Registered = Ok<'registerPublicTest'>;
export type ResetRequested = Accepted<'requestPasswordReset'>;
export type PasswordChanged = Ok<'confirmPasswordReset'>;
export type Tier = Me['tier'];

export type CatalogEntry = Item<'listCatalog'>;
export type Dataset = Ok<'describeDataset'>;
export type Field = Dataset['fields'][number];
export type Price = Item<'getMyPrices'>;
export type Estimate = Ok<'estimateCost'>;

export type ReadPage = Exclude<Ok<'readDataset'>, string>;
export type Row = ReadPage['data'][number];

export type Key = Item<'listKeys'>;
export type Connection = Item<'listConnections'>;
export type PendingConnection = Ok<'getPendingConnection'>;
export type LedgerEntry = Item<'getMyLedger'>;
export type UsageSummary = Ok<'getMyUsageSummary'>;

export type Analysis = Ok<'getAnalysis'>;
export type AnalysisSpec = Analysis['spec'];
export type SeriesSpec = AnalysisSpec['series'][number];
export type AnalysisEstimate = Ok<'estimateAnalysis'>;
export type AnalysisResult = Ok<'runAnalysis'>;
export type AnalysisOutput = AnalysisResult['outputs'][number];
export type AssistantAnswer = Ok<'askAssistant'>;
export type QuestionEstimate = Ok<'estimateAssistantQuestion'>;

export type TokenPack = Item<'listTokenPacks'>;
export type Purchase = Item<'listMyPurchases'>;
export type TokenRequest = Item<'listMyTokenRequests'>;

/**
 * A package as GET /api/v1/pricing lists it. The document describes that answer as an open object (it is
 * the service's pricing configuration), so the members the Terminal reads are named here.
 */
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

export type Pricing = Ok<'getPricing'> & {
  terminal_surcharge_percent: number;
  commercial_skus: Sku[];
  loyalty_tiers: Tier[];
};
