/**
 * SqliteStore: the embedded default, on node:sqlite in WAL mode. Statements run synchronously, so a
 * transaction with no await inside cannot interleave with another request of this process; BEGIN
 * IMMEDIATE and busy_timeout keep it correct when several processes share the file. The work is done
 * by one part per aggregate over one connection (db.ts); this class composes them into the Store port.
 */
import type { Store } from '../port.ts';
import { SqliteAccounts } from './accounts.ts';
import { SqliteAnalyses } from './analyses.ts';
import { SqliteBilling } from './billing.ts';
import type { Checkpointer } from './checkpointer.ts';
import { SqliteCollection } from './collection.ts';
import { SqliteDb } from './db.ts';
import { SqliteIdempotency } from './idempotency.ts';
import { SqliteLedger } from './ledger.ts';
import { SqliteLoads } from './loads.ts';
import { SqliteOAuth } from './oauth.ts';
import { SqlitePages } from './pages.ts';

export class SqliteStore implements Store {
  readonly #db: SqliteDb;
  readonly #accounts: SqliteAccounts;
  readonly #ledger: SqliteLedger;
  readonly #loads: SqliteLoads;
  readonly #pages: SqlitePages;
  readonly #idempotency: SqliteIdempotency;
  readonly #oauth: SqliteOAuth;
  readonly #billing: SqliteBilling;
  readonly #collection: SqliteCollection;
  readonly #analyses: SqliteAnalyses;

  constructor(path: string) {
    const db = new SqliteDb(path);
    this.#db = db;
    this.#accounts = new SqliteAccounts(db);
    this.#ledger = new SqliteLedger(db);
    this.#loads = new SqliteLoads(db);
    this.#pages = new SqlitePages(db, (dataset) => this.#loads.layoutOf(dataset));
    this.#idempotency = new SqliteIdempotency(db);
    this.#oauth = new SqliteOAuth(db);
    this.#billing = new SqliteBilling(db);
    this.#collection = new SqliteCollection(db);
    this.#analyses = new SqliteAnalyses(db);
  }

  /** Read workers started (for tests). */
  get readWorkers(): number {
    return this.#db.scans?.started ?? 0;
  }

  /** Statements cached now (for tests). */
  get cachedStatements(): number {
    return this.#db.cachedStatements;
  }

  /** The checkpointer's state, null for an in-memory database (for tests). */
  get checkpoints(): Checkpointer['stats'] | null {
    return this.#db.checkpointer?.stats ?? null;
  }

  async migrate(): Promise<void> {
    this.#db.migrate();
  }

  async close(): Promise<void> {
    this.#loads.close();
    await this.#db.close();
  }

  async ping(): Promise<void> {
    this.#db.get('SELECT 1 AS ok');
  }

  createWallet(
    ...args: Parameters<SqliteAccounts['createWallet']>
  ): ReturnType<SqliteAccounts['createWallet']> {
    return this.#accounts.createWallet(...args);
  }

  getWallet(...args: Parameters<SqliteAccounts['getWallet']>): ReturnType<SqliteAccounts['getWallet']> {
    return this.#accounts.getWallet(...args);
  }

  createAccount(
    ...args: Parameters<SqliteAccounts['createAccount']>
  ): ReturnType<SqliteAccounts['createAccount']> {
    return this.#accounts.createAccount(...args);
  }

  getAccount(...args: Parameters<SqliteAccounts['getAccount']>): ReturnType<SqliteAccounts['getAccount']> {
    return this.#accounts.getAccount(...args);
  }

  findAccountByEmail(
    ...args: Parameters<SqliteAccounts['findAccountByEmail']>
  ): ReturnType<SqliteAccounts['findAccountByEmail']> {
    return this.#accounts.findAccountByEmail(...args);
  }

  updateAccount(
    ...args: Parameters<SqliteAccounts['updateAccount']>
  ): ReturnType<SqliteAccounts['updateAccount']> {
    return this.#accounts.updateAccount(...args);
  }

  listAccountsWithPackage(
    ...args: Parameters<SqliteAccounts['listAccountsWithPackage']>
  ): ReturnType<SqliteAccounts['listAccountsWithPackage']> {
    return this.#accounts.listAccountsWithPackage(...args);
  }

  setKeyCaps(...args: Parameters<SqliteAccounts['setKeyCaps']>): ReturnType<SqliteAccounts['setKeyCaps']> {
    return this.#accounts.setKeyCaps(...args);
  }

  insertKey(...args: Parameters<SqliteAccounts['insertKey']>): ReturnType<SqliteAccounts['insertKey']> {
    return this.#accounts.insertKey(...args);
  }

  findKeyByDigest(
    ...args: Parameters<SqliteAccounts['findKeyByDigest']>
  ): ReturnType<SqliteAccounts['findKeyByDigest']> {
    return this.#accounts.findKeyByDigest(...args);
  }

  getKey(...args: Parameters<SqliteAccounts['getKey']>): ReturnType<SqliteAccounts['getKey']> {
    return this.#accounts.getKey(...args);
  }

  listKeys(...args: Parameters<SqliteAccounts['listKeys']>): ReturnType<SqliteAccounts['listKeys']> {
    return this.#accounts.listKeys(...args);
  }

  revokeKey(...args: Parameters<SqliteAccounts['revokeKey']>): ReturnType<SqliteAccounts['revokeKey']> {
    return this.#accounts.revokeKey(...args);
  }

  replaceKeys(...args: Parameters<SqliteAccounts['replaceKeys']>): ReturnType<SqliteAccounts['replaceKeys']> {
    return this.#accounts.replaceKeys(...args);
  }

  createSession(
    ...args: Parameters<SqliteAccounts['createSession']>
  ): ReturnType<SqliteAccounts['createSession']> {
    return this.#accounts.createSession(...args);
  }

  getSession(...args: Parameters<SqliteAccounts['getSession']>): ReturnType<SqliteAccounts['getSession']> {
    return this.#accounts.getSession(...args);
  }

  revokeSession(
    ...args: Parameters<SqliteAccounts['revokeSession']>
  ): ReturnType<SqliteAccounts['revokeSession']> {
    return this.#accounts.revokeSession(...args);
  }

  insertPasswordReset(
    ...args: Parameters<SqliteAccounts['insertPasswordReset']>
  ): ReturnType<SqliteAccounts['insertPasswordReset']> {
    return this.#accounts.insertPasswordReset(...args);
  }

  findPasswordReset(
    ...args: Parameters<SqliteAccounts['findPasswordReset']>
  ): ReturnType<SqliteAccounts['findPasswordReset']> {
    return this.#accounts.findPasswordReset(...args);
  }

  completePasswordReset(
    ...args: Parameters<SqliteAccounts['completePasswordReset']>
  ): ReturnType<SqliteAccounts['completePasswordReset']> {
    return this.#accounts.completePasswordReset(...args);
  }

  credit(...args: Parameters<SqliteLedger['credit']>): ReturnType<SqliteLedger['credit']> {
    return this.#ledger.credit(...args);
  }

  debit(...args: Parameters<SqliteLedger['debit']>): ReturnType<SqliteLedger['debit']> {
    return this.#ledger.debit(...args);
  }

  recordUsage(...args: Parameters<SqliteLedger['recordUsage']>): ReturnType<SqliteLedger['recordUsage']> {
    return this.#ledger.recordUsage(...args);
  }

  keyBurnedSince(
    ...args: Parameters<SqliteLedger['keyBurnedSince']>
  ): ReturnType<SqliteLedger['keyBurnedSince']> {
    return this.#ledger.keyBurnedSince(...args);
  }

  listEntries(...args: Parameters<SqliteLedger['listEntries']>): ReturnType<SqliteLedger['listEntries']> {
    return this.#ledger.listEntries(...args);
  }

  listEntriesPage(
    ...args: Parameters<SqliteLedger['listEntriesPage']>
  ): ReturnType<SqliteLedger['listEntriesPage']> {
    return this.#ledger.listEntriesPage(...args);
  }

  auditLedger(...args: Parameters<SqliteLedger['auditLedger']>): ReturnType<SqliteLedger['auditLedger']> {
    return this.#ledger.auditLedger(...args);
  }

  sumEntries(...args: Parameters<SqliteLedger['sumEntries']>): ReturnType<SqliteLedger['sumEntries']> {
    return this.#ledger.sumEntries(...args);
  }

  listUsage(...args: Parameters<SqliteLedger['listUsage']>): ReturnType<SqliteLedger['listUsage']> {
    return this.#ledger.listUsage(...args);
  }

  sumUsage(...args: Parameters<SqliteLedger['sumUsage']>): ReturnType<SqliteLedger['sumUsage']> {
    return this.#ledger.sumUsage(...args);
  }

  loadRows(...args: Parameters<SqliteLoads['loadRows']>): ReturnType<SqliteLoads['loadRows']> {
    return this.#loads.loadRows(...args);
  }

  loadRowsStream(
    ...args: Parameters<SqliteLoads['loadRowsStream']>
  ): ReturnType<SqliteLoads['loadRowsStream']> {
    return this.#loads.loadRowsStream(...args);
  }

  onLoaded(...args: Parameters<SqliteLoads['onLoaded']>): ReturnType<SqliteLoads['onLoaded']> {
    return this.#loads.onLoaded(...args);
  }

  datasetSource(...args: Parameters<SqliteLoads['datasetSource']>): ReturnType<SqliteLoads['datasetSource']> {
    return this.#loads.datasetSource(...args);
  }

  syncLayouts(...args: Parameters<SqliteLoads['syncLayouts']>): ReturnType<SqliteLoads['syncLayouts']> {
    return this.#loads.syncLayouts(...args);
  }

  upsertRows(...args: Parameters<SqliteLoads['upsertRows']>): ReturnType<SqliteLoads['upsertRows']> {
    return this.#loads.upsertRows(...args);
  }

  upsertRowsStream(
    ...args: Parameters<SqliteLoads['upsertRowsStream']>
  ): ReturnType<SqliteLoads['upsertRowsStream']> {
    return this.#loads.upsertRowsStream(...args);
  }

  queryRows(...args: Parameters<SqlitePages['queryRows']>): ReturnType<SqlitePages['queryRows']> {
    return this.#pages.queryRows(...args);
  }

  queryPage(...args: Parameters<SqlitePages['queryPage']>): ReturnType<SqlitePages['queryPage']> {
    return this.#pages.queryPage(...args);
  }

  claimIdempotencyKey(
    ...args: Parameters<SqliteIdempotency['claimIdempotencyKey']>
  ): ReturnType<SqliteIdempotency['claimIdempotencyKey']> {
    return this.#idempotency.claimIdempotencyKey(...args);
  }

  completeIdempotencyKey(
    ...args: Parameters<SqliteIdempotency['completeIdempotencyKey']>
  ): ReturnType<SqliteIdempotency['completeIdempotencyKey']> {
    return this.#idempotency.completeIdempotencyKey(...args);
  }

  releaseIdempotencyKey(
    ...args: Parameters<SqliteIdempotency['releaseIdempotencyKey']>
  ): ReturnType<SqliteIdempotency['releaseIdempotencyKey']> {
    return this.#idempotency.releaseIdempotencyKey(...args);
  }

  upsertOAuthRecord(
    ...args: Parameters<SqliteOAuth['upsertOAuthRecord']>
  ): ReturnType<SqliteOAuth['upsertOAuthRecord']> {
    return this.#oauth.upsertOAuthRecord(...args);
  }

  findOAuthRecord(
    ...args: Parameters<SqliteOAuth['findOAuthRecord']>
  ): ReturnType<SqliteOAuth['findOAuthRecord']> {
    return this.#oauth.findOAuthRecord(...args);
  }

  findOAuthRecordBy(
    ...args: Parameters<SqliteOAuth['findOAuthRecordBy']>
  ): ReturnType<SqliteOAuth['findOAuthRecordBy']> {
    return this.#oauth.findOAuthRecordBy(...args);
  }

  consumeOAuthRecord(
    ...args: Parameters<SqliteOAuth['consumeOAuthRecord']>
  ): ReturnType<SqliteOAuth['consumeOAuthRecord']> {
    return this.#oauth.consumeOAuthRecord(...args);
  }

  destroyOAuthRecord(
    ...args: Parameters<SqliteOAuth['destroyOAuthRecord']>
  ): ReturnType<SqliteOAuth['destroyOAuthRecord']> {
    return this.#oauth.destroyOAuthRecord(...args);
  }

  revokeOAuthGrant(
    ...args: Parameters<SqliteOAuth['revokeOAuthGrant']>
  ): ReturnType<SqliteOAuth['revokeOAuthGrant']> {
    return this.#oauth.revokeOAuthGrant(...args);
  }

  pruneOAuthRecords(
    ...args: Parameters<SqliteOAuth['pruneOAuthRecords']>
  ): ReturnType<SqliteOAuth['pruneOAuthRecords']> {
    return this.#oauth.pruneOAuthRecords(...args);
  }

  insertOAuthConnection(
    ...args: Parameters<SqliteOAuth['insertOAuthConnection']>
  ): ReturnType<SqliteOAuth['insertOAuthConnection']> {
    return this.#oauth.insertOAuthConnection(...args);
  }

  listOAuthConnections(
    ...args: Parameters<SqliteOAuth['listOAuthConnections']>
  ): ReturnType<SqliteOAuth['listOAuthConnections']> {
    return this.#oauth.listOAuthConnections(...args);
  }

  recordPurchase(
    ...args: Parameters<SqliteBilling['recordPurchase']>
  ): ReturnType<SqliteBilling['recordPurchase']> {
    return this.#billing.recordPurchase(...args);
  }

  purchaseByPaymentIntent(
    ...args: Parameters<SqliteBilling['purchaseByPaymentIntent']>
  ): ReturnType<SqliteBilling['purchaseByPaymentIntent']> {
    return this.#billing.purchaseByPaymentIntent(...args);
  }

  listPurchases(
    ...args: Parameters<SqliteBilling['listPurchases']>
  ): ReturnType<SqliteBilling['listPurchases']> {
    return this.#billing.listPurchases(...args);
  }

  reclaimPurchase(
    ...args: Parameters<SqliteBilling['reclaimPurchase']>
  ): ReturnType<SqliteBilling['reclaimPurchase']> {
    return this.#billing.reclaimPurchase(...args);
  }

  createTokenRequest(
    ...args: Parameters<SqliteBilling['createTokenRequest']>
  ): ReturnType<SqliteBilling['createTokenRequest']> {
    return this.#billing.createTokenRequest(...args);
  }

  getTokenRequest(
    ...args: Parameters<SqliteBilling['getTokenRequest']>
  ): ReturnType<SqliteBilling['getTokenRequest']> {
    return this.#billing.getTokenRequest(...args);
  }

  listTokenRequests(
    ...args: Parameters<SqliteBilling['listTokenRequests']>
  ): ReturnType<SqliteBilling['listTokenRequests']> {
    return this.#billing.listTokenRequests(...args);
  }

  settleTokenRequest(
    ...args: Parameters<SqliteBilling['settleTokenRequest']>
  ): ReturnType<SqliteBilling['settleTokenRequest']> {
    return this.#billing.settleTokenRequest(...args);
  }

  collectorState(
    ...args: Parameters<SqliteCollection['collectorState']>
  ): ReturnType<SqliteCollection['collectorState']> {
    return this.#collection.collectorState(...args);
  }

  listCollectorStates(
    ...args: Parameters<SqliteCollection['listCollectorStates']>
  ): ReturnType<SqliteCollection['listCollectorStates']> {
    return this.#collection.listCollectorStates(...args);
  }

  saveCollectorState(
    ...args: Parameters<SqliteCollection['saveCollectorState']>
  ): ReturnType<SqliteCollection['saveCollectorState']> {
    return this.#collection.saveCollectorState(...args);
  }

  claimCollectorSlot(
    ...args: Parameters<SqliteCollection['claimCollectorSlot']>
  ): ReturnType<SqliteCollection['claimCollectorSlot']> {
    return this.#collection.claimCollectorSlot(...args);
  }

  recordCollectionRun(
    ...args: Parameters<SqliteCollection['recordCollectionRun']>
  ): ReturnType<SqliteCollection['recordCollectionRun']> {
    return this.#collection.recordCollectionRun(...args);
  }

  listCollectionRuns(
    ...args: Parameters<SqliteCollection['listCollectionRuns']>
  ): ReturnType<SqliteCollection['listCollectionRuns']> {
    return this.#collection.listCollectionRuns(...args);
  }

  listImportRuns(
    ...args: Parameters<SqliteCollection['listImportRuns']>
  ): ReturnType<SqliteCollection['listImportRuns']> {
    return this.#collection.listImportRuns(...args);
  }

  datasetSpan(
    ...args: Parameters<SqliteCollection['datasetSpan']>
  ): ReturnType<SqliteCollection['datasetSpan']> {
    return this.#collection.datasetSpan(...args);
  }

  createAnalysis(
    ...args: Parameters<SqliteAnalyses['createAnalysis']>
  ): ReturnType<SqliteAnalyses['createAnalysis']> {
    return this.#analyses.createAnalysis(...args);
  }

  getAnalysis(...args: Parameters<SqliteAnalyses['getAnalysis']>): ReturnType<SqliteAnalyses['getAnalysis']> {
    return this.#analyses.getAnalysis(...args);
  }

  listAnalyses(
    ...args: Parameters<SqliteAnalyses['listAnalyses']>
  ): ReturnType<SqliteAnalyses['listAnalyses']> {
    return this.#analyses.listAnalyses(...args);
  }

  updateAnalysis(
    ...args: Parameters<SqliteAnalyses['updateAnalysis']>
  ): ReturnType<SqliteAnalyses['updateAnalysis']> {
    return this.#analyses.updateAnalysis(...args);
  }

  deleteAnalysis(
    ...args: Parameters<SqliteAnalyses['deleteAnalysis']>
  ): ReturnType<SqliteAnalyses['deleteAnalysis']> {
    return this.#analyses.deleteAnalysis(...args);
  }

  beginAnalysisRun(
    ...args: Parameters<SqliteAnalyses['beginAnalysisRun']>
  ): ReturnType<SqliteAnalyses['beginAnalysisRun']> {
    return this.#analyses.beginAnalysisRun(...args);
  }

  finishAnalysisRun(
    ...args: Parameters<SqliteAnalyses['finishAnalysisRun']>
  ): ReturnType<SqliteAnalyses['finishAnalysisRun']> {
    return this.#analyses.finishAnalysisRun(...args);
  }

  releaseAnalysisRun(
    ...args: Parameters<SqliteAnalyses['releaseAnalysisRun']>
  ): ReturnType<SqliteAnalyses['releaseAnalysisRun']> {
    return this.#analyses.releaseAnalysisRun(...args);
  }

  countAnalysisRuns(
    ...args: Parameters<SqliteAnalyses['countAnalysisRuns']>
  ): ReturnType<SqliteAnalyses['countAnalysisRuns']> {
    return this.#analyses.countAnalysisRuns(...args);
  }

  findAnalysisRun(
    ...args: Parameters<SqliteAnalyses['findAnalysisRun']>
  ): ReturnType<SqliteAnalyses['findAnalysisRun']> {
    return this.#analyses.findAnalysisRun(...args);
  }
}
