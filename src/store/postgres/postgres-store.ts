/**
 * PostgresStore: the shared store for several service nodes, on node-postgres (`pg`). Money is bigint
 * in SQL and BigInt in JS. A debit is one conditional statement (`UPDATE … WHERE balance_micros >= cost
 * RETURNING …` with its ledger entry and usage event in the same statement), behind a CHECK constraint.
 * Debits that arrive together share one transaction (a group commit, in wallet order so batches from
 * several nodes can never deadlock; a wallet's debits in it are one conditional UPDATE of their total
 * when its balance covers them all); no promise resolves before its COMMIT, and a failed batch fails
 * every debit in it. Lost connections surface as `service_unavailable` (503): nothing is served
 * unmetered, and the client reconnects on the next query, so the service recovers without a restart.
 * The work is done by one part per aggregate over the pools (db.ts); this class composes them.
 */
import type { Store } from '../port.ts';
import { PgAccounts } from './accounts.ts';
import { PgAnalyses } from './analyses.ts';
import { PgBilling } from './billing.ts';
import { PgCollection } from './collection.ts';
import { PgDb, type PostgresStoreOptions } from './db.ts';
import { GroupCommit } from './group-commit.ts';
import { PgIdempotency } from './idempotency.ts';
import { PgLedger } from './ledger.ts';
import { PgLoads } from './loads.ts';
import { PgOAuth } from './oauth.ts';
import { PgPages } from './pages.ts';

export {
  isStandby,
  isUnavailable,
  isUnreachable,
  type PostgresStoreOptions,
  type StoreHealth,
} from './db.ts';

export class PostgresStore implements Store {
  readonly #db: PgDb;
  readonly #accounts: PgAccounts;
  readonly #ledger: PgLedger;
  readonly #loads: PgLoads;
  readonly #pages: PgPages;
  readonly #idempotency: PgIdempotency;
  readonly #oauth: PgOAuth;
  readonly #billing: PgBilling;
  readonly #collection: PgCollection;
  readonly #analyses: PgAnalyses;

  constructor(url: string, options: PostgresStoreOptions = {}) {
    const db = new PgDb(url, options);
    this.#db = db;
    this.#accounts = new PgAccounts(db);
    const commits = new GroupCommit(db, {
      maxBatch: options.maxBatch ?? 64,
      maxConcurrentBatches: options.maxConcurrentBatches ?? 4,
    });
    this.#ledger = new PgLedger(db, commits, (id) => this.#accounts.getWallet(id));
    this.#loads = new PgLoads(db);
    this.#pages = new PgPages(db, (dataset) => this.#loads.layoutOf(dataset));
    this.#idempotency = new PgIdempotency(db);
    this.#oauth = new PgOAuth(db);
    this.#billing = new PgBilling(db);
    this.#collection = new PgCollection(db);
    this.#analyses = new PgAnalyses(db);
  }

  async migrate(): Promise<void> {
    await this.#db.migrate();
  }

  async close(): Promise<void> {
    await this.#loads.close();
    await this.#db.close();
  }

  /** This process's pool: its connections, the idle ones, and the queries waiting for one. */
  poolStats(): { total: number; idle: number; waiting: number } {
    return this.#db.poolStats();
  }

  async ping(): Promise<void> {
    await this.#db.ping();
  }

  createWallet(...args: Parameters<PgAccounts['createWallet']>): ReturnType<PgAccounts['createWallet']> {
    return this.#accounts.createWallet(...args);
  }

  getWallet(...args: Parameters<PgAccounts['getWallet']>): ReturnType<PgAccounts['getWallet']> {
    return this.#accounts.getWallet(...args);
  }

  createAccount(...args: Parameters<PgAccounts['createAccount']>): ReturnType<PgAccounts['createAccount']> {
    return this.#accounts.createAccount(...args);
  }

  getAccount(...args: Parameters<PgAccounts['getAccount']>): ReturnType<PgAccounts['getAccount']> {
    return this.#accounts.getAccount(...args);
  }

  findAccountByEmail(
    ...args: Parameters<PgAccounts['findAccountByEmail']>
  ): ReturnType<PgAccounts['findAccountByEmail']> {
    return this.#accounts.findAccountByEmail(...args);
  }

  updateAccount(...args: Parameters<PgAccounts['updateAccount']>): ReturnType<PgAccounts['updateAccount']> {
    return this.#accounts.updateAccount(...args);
  }

  listAccountsWithPackage(
    ...args: Parameters<PgAccounts['listAccountsWithPackage']>
  ): ReturnType<PgAccounts['listAccountsWithPackage']> {
    return this.#accounts.listAccountsWithPackage(...args);
  }

  setKeyCaps(...args: Parameters<PgAccounts['setKeyCaps']>): ReturnType<PgAccounts['setKeyCaps']> {
    return this.#accounts.setKeyCaps(...args);
  }

  insertKey(...args: Parameters<PgAccounts['insertKey']>): ReturnType<PgAccounts['insertKey']> {
    return this.#accounts.insertKey(...args);
  }

  findKeyByDigest(
    ...args: Parameters<PgAccounts['findKeyByDigest']>
  ): ReturnType<PgAccounts['findKeyByDigest']> {
    return this.#accounts.findKeyByDigest(...args);
  }

  getKey(...args: Parameters<PgAccounts['getKey']>): ReturnType<PgAccounts['getKey']> {
    return this.#accounts.getKey(...args);
  }

  listKeys(...args: Parameters<PgAccounts['listKeys']>): ReturnType<PgAccounts['listKeys']> {
    return this.#accounts.listKeys(...args);
  }

  revokeKey(...args: Parameters<PgAccounts['revokeKey']>): ReturnType<PgAccounts['revokeKey']> {
    return this.#accounts.revokeKey(...args);
  }

  replaceKeys(...args: Parameters<PgAccounts['replaceKeys']>): ReturnType<PgAccounts['replaceKeys']> {
    return this.#accounts.replaceKeys(...args);
  }

  createSession(...args: Parameters<PgAccounts['createSession']>): ReturnType<PgAccounts['createSession']> {
    return this.#accounts.createSession(...args);
  }

  getSession(...args: Parameters<PgAccounts['getSession']>): ReturnType<PgAccounts['getSession']> {
    return this.#accounts.getSession(...args);
  }

  revokeSession(...args: Parameters<PgAccounts['revokeSession']>): ReturnType<PgAccounts['revokeSession']> {
    return this.#accounts.revokeSession(...args);
  }

  insertPasswordReset(
    ...args: Parameters<PgAccounts['insertPasswordReset']>
  ): ReturnType<PgAccounts['insertPasswordReset']> {
    return this.#accounts.insertPasswordReset(...args);
  }

  findPasswordReset(
    ...args: Parameters<PgAccounts['findPasswordReset']>
  ): ReturnType<PgAccounts['findPasswordReset']> {
    return this.#accounts.findPasswordReset(...args);
  }

  completePasswordReset(
    ...args: Parameters<PgAccounts['completePasswordReset']>
  ): ReturnType<PgAccounts['completePasswordReset']> {
    return this.#accounts.completePasswordReset(...args);
  }

  credit(...args: Parameters<PgLedger['credit']>): ReturnType<PgLedger['credit']> {
    return this.#ledger.credit(...args);
  }

  debit(...args: Parameters<PgLedger['debit']>): ReturnType<PgLedger['debit']> {
    return this.#ledger.debit(...args);
  }

  recordUsage(...args: Parameters<PgLedger['recordUsage']>): ReturnType<PgLedger['recordUsage']> {
    return this.#ledger.recordUsage(...args);
  }

  keyBurnedSince(...args: Parameters<PgLedger['keyBurnedSince']>): ReturnType<PgLedger['keyBurnedSince']> {
    return this.#ledger.keyBurnedSince(...args);
  }

  listEntries(...args: Parameters<PgLedger['listEntries']>): ReturnType<PgLedger['listEntries']> {
    return this.#ledger.listEntries(...args);
  }

  listEntriesPage(...args: Parameters<PgLedger['listEntriesPage']>): ReturnType<PgLedger['listEntriesPage']> {
    return this.#ledger.listEntriesPage(...args);
  }

  auditLedger(...args: Parameters<PgLedger['auditLedger']>): ReturnType<PgLedger['auditLedger']> {
    return this.#ledger.auditLedger(...args);
  }

  sumEntries(...args: Parameters<PgLedger['sumEntries']>): ReturnType<PgLedger['sumEntries']> {
    return this.#ledger.sumEntries(...args);
  }

  listUsage(...args: Parameters<PgLedger['listUsage']>): ReturnType<PgLedger['listUsage']> {
    return this.#ledger.listUsage(...args);
  }

  sumUsage(...args: Parameters<PgLedger['sumUsage']>): ReturnType<PgLedger['sumUsage']> {
    return this.#ledger.sumUsage(...args);
  }

  loadRows(...args: Parameters<PgLoads['loadRows']>): ReturnType<PgLoads['loadRows']> {
    return this.#loads.loadRows(...args);
  }

  loadRowsStream(...args: Parameters<PgLoads['loadRowsStream']>): ReturnType<PgLoads['loadRowsStream']> {
    return this.#loads.loadRowsStream(...args);
  }

  onLoaded(...args: Parameters<PgLoads['onLoaded']>): ReturnType<PgLoads['onLoaded']> {
    return this.#loads.onLoaded(...args);
  }

  datasetSource(...args: Parameters<PgLoads['datasetSource']>): ReturnType<PgLoads['datasetSource']> {
    return this.#loads.datasetSource(...args);
  }

  syncLayouts(...args: Parameters<PgLoads['syncLayouts']>): ReturnType<PgLoads['syncLayouts']> {
    return this.#loads.syncLayouts(...args);
  }

  upsertRows(...args: Parameters<PgLoads['upsertRows']>): ReturnType<PgLoads['upsertRows']> {
    return this.#loads.upsertRows(...args);
  }

  upsertRowsStream(
    ...args: Parameters<PgLoads['upsertRowsStream']>
  ): ReturnType<PgLoads['upsertRowsStream']> {
    return this.#loads.upsertRowsStream(...args);
  }

  queryPage(...args: Parameters<PgPages['queryPage']>): ReturnType<PgPages['queryPage']> {
    return this.#pages.queryPage(...args);
  }

  queryRows(...args: Parameters<PgPages['queryRows']>): ReturnType<PgPages['queryRows']> {
    return this.#pages.queryRows(...args);
  }

  claimIdempotencyKey(
    ...args: Parameters<PgIdempotency['claimIdempotencyKey']>
  ): ReturnType<PgIdempotency['claimIdempotencyKey']> {
    return this.#idempotency.claimIdempotencyKey(...args);
  }

  completeIdempotencyKey(
    ...args: Parameters<PgIdempotency['completeIdempotencyKey']>
  ): ReturnType<PgIdempotency['completeIdempotencyKey']> {
    return this.#idempotency.completeIdempotencyKey(...args);
  }

  releaseIdempotencyKey(
    ...args: Parameters<PgIdempotency['releaseIdempotencyKey']>
  ): ReturnType<PgIdempotency['releaseIdempotencyKey']> {
    return this.#idempotency.releaseIdempotencyKey(...args);
  }

  upsertOAuthRecord(
    ...args: Parameters<PgOAuth['upsertOAuthRecord']>
  ): ReturnType<PgOAuth['upsertOAuthRecord']> {
    return this.#oauth.upsertOAuthRecord(...args);
  }

  findOAuthRecord(...args: Parameters<PgOAuth['findOAuthRecord']>): ReturnType<PgOAuth['findOAuthRecord']> {
    return this.#oauth.findOAuthRecord(...args);
  }

  findOAuthRecordBy(
    ...args: Parameters<PgOAuth['findOAuthRecordBy']>
  ): ReturnType<PgOAuth['findOAuthRecordBy']> {
    return this.#oauth.findOAuthRecordBy(...args);
  }

  consumeOAuthRecord(
    ...args: Parameters<PgOAuth['consumeOAuthRecord']>
  ): ReturnType<PgOAuth['consumeOAuthRecord']> {
    return this.#oauth.consumeOAuthRecord(...args);
  }

  destroyOAuthRecord(
    ...args: Parameters<PgOAuth['destroyOAuthRecord']>
  ): ReturnType<PgOAuth['destroyOAuthRecord']> {
    return this.#oauth.destroyOAuthRecord(...args);
  }

  revokeOAuthGrant(
    ...args: Parameters<PgOAuth['revokeOAuthGrant']>
  ): ReturnType<PgOAuth['revokeOAuthGrant']> {
    return this.#oauth.revokeOAuthGrant(...args);
  }

  pruneOAuthRecords(
    ...args: Parameters<PgOAuth['pruneOAuthRecords']>
  ): ReturnType<PgOAuth['pruneOAuthRecords']> {
    return this.#oauth.pruneOAuthRecords(...args);
  }

  insertOAuthConnection(
    ...args: Parameters<PgOAuth['insertOAuthConnection']>
  ): ReturnType<PgOAuth['insertOAuthConnection']> {
    return this.#oauth.insertOAuthConnection(...args);
  }

  listOAuthConnections(
    ...args: Parameters<PgOAuth['listOAuthConnections']>
  ): ReturnType<PgOAuth['listOAuthConnections']> {
    return this.#oauth.listOAuthConnections(...args);
  }

  recordPurchase(...args: Parameters<PgBilling['recordPurchase']>): ReturnType<PgBilling['recordPurchase']> {
    return this.#billing.recordPurchase(...args);
  }

  purchaseByPaymentIntent(
    ...args: Parameters<PgBilling['purchaseByPaymentIntent']>
  ): ReturnType<PgBilling['purchaseByPaymentIntent']> {
    return this.#billing.purchaseByPaymentIntent(...args);
  }

  listPurchases(...args: Parameters<PgBilling['listPurchases']>): ReturnType<PgBilling['listPurchases']> {
    return this.#billing.listPurchases(...args);
  }

  reclaimPurchase(
    ...args: Parameters<PgBilling['reclaimPurchase']>
  ): ReturnType<PgBilling['reclaimPurchase']> {
    return this.#billing.reclaimPurchase(...args);
  }

  createTokenRequest(
    ...args: Parameters<PgBilling['createTokenRequest']>
  ): ReturnType<PgBilling['createTokenRequest']> {
    return this.#billing.createTokenRequest(...args);
  }

  getTokenRequest(
    ...args: Parameters<PgBilling['getTokenRequest']>
  ): ReturnType<PgBilling['getTokenRequest']> {
    return this.#billing.getTokenRequest(...args);
  }

  listTokenRequests(
    ...args: Parameters<PgBilling['listTokenRequests']>
  ): ReturnType<PgBilling['listTokenRequests']> {
    return this.#billing.listTokenRequests(...args);
  }

  settleTokenRequest(
    ...args: Parameters<PgBilling['settleTokenRequest']>
  ): ReturnType<PgBilling['settleTokenRequest']> {
    return this.#billing.settleTokenRequest(...args);
  }

  collectorState(
    ...args: Parameters<PgCollection['collectorState']>
  ): ReturnType<PgCollection['collectorState']> {
    return this.#collection.collectorState(...args);
  }

  listCollectorStates(
    ...args: Parameters<PgCollection['listCollectorStates']>
  ): ReturnType<PgCollection['listCollectorStates']> {
    return this.#collection.listCollectorStates(...args);
  }

  saveCollectorState(
    ...args: Parameters<PgCollection['saveCollectorState']>
  ): ReturnType<PgCollection['saveCollectorState']> {
    return this.#collection.saveCollectorState(...args);
  }

  claimCollectorSlot(
    ...args: Parameters<PgCollection['claimCollectorSlot']>
  ): ReturnType<PgCollection['claimCollectorSlot']> {
    return this.#collection.claimCollectorSlot(...args);
  }

  recordCollectionRun(
    ...args: Parameters<PgCollection['recordCollectionRun']>
  ): ReturnType<PgCollection['recordCollectionRun']> {
    return this.#collection.recordCollectionRun(...args);
  }

  listCollectionRuns(
    ...args: Parameters<PgCollection['listCollectionRuns']>
  ): ReturnType<PgCollection['listCollectionRuns']> {
    return this.#collection.listCollectionRuns(...args);
  }

  listImportRuns(
    ...args: Parameters<PgCollection['listImportRuns']>
  ): ReturnType<PgCollection['listImportRuns']> {
    return this.#collection.listImportRuns(...args);
  }

  datasetSpan(...args: Parameters<PgCollection['datasetSpan']>): ReturnType<PgCollection['datasetSpan']> {
    return this.#collection.datasetSpan(...args);
  }

  createAnalysis(
    ...args: Parameters<PgAnalyses['createAnalysis']>
  ): ReturnType<PgAnalyses['createAnalysis']> {
    return this.#analyses.createAnalysis(...args);
  }

  getAnalysis(...args: Parameters<PgAnalyses['getAnalysis']>): ReturnType<PgAnalyses['getAnalysis']> {
    return this.#analyses.getAnalysis(...args);
  }

  listAnalyses(...args: Parameters<PgAnalyses['listAnalyses']>): ReturnType<PgAnalyses['listAnalyses']> {
    return this.#analyses.listAnalyses(...args);
  }

  updateAnalysis(
    ...args: Parameters<PgAnalyses['updateAnalysis']>
  ): ReturnType<PgAnalyses['updateAnalysis']> {
    return this.#analyses.updateAnalysis(...args);
  }

  deleteAnalysis(
    ...args: Parameters<PgAnalyses['deleteAnalysis']>
  ): ReturnType<PgAnalyses['deleteAnalysis']> {
    return this.#analyses.deleteAnalysis(...args);
  }

  beginAnalysisRun(
    ...args: Parameters<PgAnalyses['beginAnalysisRun']>
  ): ReturnType<PgAnalyses['beginAnalysisRun']> {
    return this.#analyses.beginAnalysisRun(...args);
  }

  finishAnalysisRun(
    ...args: Parameters<PgAnalyses['finishAnalysisRun']>
  ): ReturnType<PgAnalyses['finishAnalysisRun']> {
    return this.#analyses.finishAnalysisRun(...args);
  }

  releaseAnalysisRun(
    ...args: Parameters<PgAnalyses['releaseAnalysisRun']>
  ): ReturnType<PgAnalyses['releaseAnalysisRun']> {
    return this.#analyses.releaseAnalysisRun(...args);
  }

  countAnalysisRuns(
    ...args: Parameters<PgAnalyses['countAnalysisRuns']>
  ): ReturnType<PgAnalyses['countAnalysisRuns']> {
    return this.#analyses.countAnalysisRuns(...args);
  }

  findAnalysisRun(
    ...args: Parameters<PgAnalyses['findAnalysisRun']>
  ): ReturnType<PgAnalyses['findAnalysisRun']> {
    return this.#analyses.findAnalysisRun(...args);
  }
}
