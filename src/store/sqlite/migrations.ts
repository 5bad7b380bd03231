/** Versioned schema of the SQLite store. Append new versions; never edit an applied one. */
export const sqliteMigrations: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'accounts, keys, wallets, ledger, usage, dataset rows',
    sql: `
      CREATE TABLE wallets (
        id TEXT PRIMARY KEY,
        account_id TEXT,
        balance_micros INTEGER NOT NULL DEFAULT 0 CHECK (balance_micros >= 0),
        burn_month TEXT NOT NULL,
        burn_month_micros INTEGER NOT NULL DEFAULT 0 CHECK (burn_month_micros >= 0)
      );
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        email TEXT UNIQUE,
        password_hash TEXT,
        plan TEXT NOT NULL DEFAULT 'standard' CHECK (plan IN ('standard', 'early_bird')),
        package_id TEXT,
        wallet_id TEXT NOT NULL REFERENCES wallets(id),
        created_at INTEGER NOT NULL,
        public_test_started_at INTEGER
      );
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL CHECK (kind IN ('sandbox', 'public_test', 'live')),
        digest TEXT NOT NULL UNIQUE,
        display_prefix TEXT NOT NULL,
        name TEXT,
        account_id TEXT REFERENCES accounts(id),
        wallet_id TEXT NOT NULL REFERENCES wallets(id),
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        revoked_at INTEGER,
        daily_cap_micros INTEGER,
        monthly_cap_micros INTEGER
      );
      CREATE INDEX api_keys_account ON api_keys(account_id, kind);
      CREATE TABLE ledger_entries (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        wallet_id TEXT NOT NULL REFERENCES wallets(id),
        kind TEXT NOT NULL CHECK (kind IN ('grant', 'topup', 'monthly_credit', 'burn', 'refund', 'adjustment')),
        amount_micros INTEGER NOT NULL,
        balance_after_micros INTEGER NOT NULL CHECK (balance_after_micros >= 0),
        created_at INTEGER NOT NULL,
        request_id TEXT,
        idempotency_key TEXT,
        memo TEXT
      );
      CREATE INDEX ledger_entries_wallet ON ledger_entries(wallet_id, id);
      CREATE UNIQUE INDEX ledger_entries_idempotency ON ledger_entries(wallet_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
      CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
        BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
      CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
        BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
      CREATE TABLE usage_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        request_id TEXT NOT NULL,
        key_id TEXT,
        account_id TEXT,
        wallet_id TEXT NOT NULL,
        dataset TEXT NOT NULL,
        channel TEXT NOT NULL,
        list_cost_micros INTEGER NOT NULL,
        cost_micros INTEGER NOT NULL,
        burned_micros INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        rows INTEGER NOT NULL,
        at INTEGER NOT NULL
      );
      CREATE INDEX usage_events_account ON usage_events(account_id, id);
      CREATE INDEX usage_events_key ON usage_events(key_id, at);
      CREATE TABLE dataset_rows (
        dataset TEXT NOT NULL,
        id INTEGER NOT NULL,
        t TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (dataset, id)
      ) WITHOUT ROWID;
      CREATE INDEX dataset_rows_time ON dataset_rows(dataset, t, id);
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
      CREATE TABLE dataset_sources (
        dataset TEXT PRIMARY KEY,
        source TEXT NOT NULL CHECK (source IN ('sample', 'import')),
        row_count INTEGER NOT NULL,
        loaded_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'covering index for per-key spend sums (spending caps)',
    // The cap check sums a key's burns since a day or month start inside the debit; with burned_micros
    // in the index that sum never touches the table.
    sql: `
      DROP INDEX usage_events_key;
      CREATE INDEX usage_events_key ON usage_events(key_id, at, burned_micros);
    `,
  },
  {
    version: 3,
    name: 'dataset rows clustered by (dataset, t, id), with stored CSV lines',
    // A page is a range of the primary key read in order: one B-tree walk, where the (dataset, t, id)
    // index of version 1 cost a second lookup per row (about half the time of a 100-row page).
    // csv: each row's CSV cells, rendered at load over the columns named in dataset_sources.csv_columns;
    // a CSV or MCP read joins them. Rows loaded before this version have none and are rendered per read.
    sql: `
      CREATE TABLE dataset_rows_by_time (
        dataset TEXT NOT NULL,
        t TEXT NOT NULL,
        id INTEGER NOT NULL,
        data TEXT NOT NULL,
        csv TEXT,
        PRIMARY KEY (dataset, t, id)
      ) WITHOUT ROWID;
      INSERT INTO dataset_rows_by_time (dataset, t, id, data) SELECT dataset, t, id, data FROM dataset_rows;
      DROP TABLE dataset_rows;
      ALTER TABLE dataset_rows_by_time RENAME TO dataset_rows;
      ALTER TABLE dataset_sources ADD COLUMN csv_columns TEXT;
    `,
  },
  {
    version: 4,
    name: 'Workbench analyses and their runs',
    // Runs outlive their analysis (no foreign key to it): a deleted analysis's runs still count toward the
    // day's fair use. analysis_runs_account serves both the day's count and the reuse lookup.
    sql: `
      CREATE TABLE analyses (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        name TEXT NOT NULL,
        spec TEXT NOT NULL,
        transcript TEXT,
        planner TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX analyses_account ON analyses(account_id, updated_at);
      CREATE TABLE analysis_runs (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        analysis_id TEXT,
        kind TEXT NOT NULL CHECK (kind IN ('run', 'ask')),
        inputs_hash TEXT,
        started_at INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),
        reads INTEGER NOT NULL DEFAULT 0,
        burned_micros INTEGER NOT NULL DEFAULT 0,
        result TEXT
      );
      CREATE INDEX analysis_runs_account ON analysis_runs(account_id, started_at);
    `,
  },
  {
    version: 5,
    name: 'natural keys of imported rows, and the record of each import',
    // nk: the row's natural key (entity + time, or accession + line), so importing a file again replaces
    // its rows rather than adding them; import_id: the run that supplied the row (a read's meta.source).
    sql: `
      ALTER TABLE dataset_rows ADD COLUMN nk TEXT;
      ALTER TABLE dataset_rows ADD COLUMN import_id INTEGER;
      CREATE UNIQUE INDEX dataset_rows_natural_key ON dataset_rows(dataset, nk) WHERE nk IS NOT NULL;
      CREATE TABLE import_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        dataset TEXT NOT NULL,
        importer TEXT NOT NULL,
        source_name TEXT NOT NULL,
        file_name TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        licence TEXT NOT NULL,
        attribution TEXT,
        imported_at INTEGER NOT NULL,
        rows_read INTEGER NOT NULL,
        rows_inserted INTEGER NOT NULL,
        rows_replaced INTEGER NOT NULL,
        rows_rejected INTEGER NOT NULL,
        first_t TEXT,
        last_t TEXT
      );
      CREATE INDEX import_runs_dataset ON import_runs(dataset, id);
    `,
  },
  {
    version: 6,
    name: 'entity key columns, each with its index',
    // k1..k12: the dataset's entity fields in catalog order (row-scan.ts), written at load and re-keyed by
    // syncLayouts when the catalog's order changes; entity_fields names the order the keys follow. Each
    // index is partial: a dataset with one entity field pays for one index, not twelve.
    sql: `
      ALTER TABLE dataset_rows ADD COLUMN k1 TEXT;
      ALTER TABLE dataset_rows ADD COLUMN k2 TEXT;
      ALTER TABLE dataset_rows ADD COLUMN k3 TEXT;
      ALTER TABLE dataset_rows ADD COLUMN k4 TEXT;
      ALTER TABLE dataset_rows ADD COLUMN k5 TEXT;
      ALTER TABLE dataset_rows ADD COLUMN k6 TEXT;
      ALTER TABLE dataset_rows ADD COLUMN k7 TEXT;
      ALTER TABLE dataset_rows ADD COLUMN k8 TEXT;
      ALTER TABLE dataset_rows ADD COLUMN k9 TEXT;
      ALTER TABLE dataset_rows ADD COLUMN k10 TEXT;
      ALTER TABLE dataset_rows ADD COLUMN k11 TEXT;
      ALTER TABLE dataset_rows ADD COLUMN k12 TEXT;
      CREATE INDEX dataset_rows_k1 ON dataset_rows(dataset, k1, t, id) WHERE k1 IS NOT NULL;
      CREATE INDEX dataset_rows_k2 ON dataset_rows(dataset, k2, t, id) WHERE k2 IS NOT NULL;
      CREATE INDEX dataset_rows_k3 ON dataset_rows(dataset, k3, t, id) WHERE k3 IS NOT NULL;
      CREATE INDEX dataset_rows_k4 ON dataset_rows(dataset, k4, t, id) WHERE k4 IS NOT NULL;
      CREATE INDEX dataset_rows_k5 ON dataset_rows(dataset, k5, t, id) WHERE k5 IS NOT NULL;
      CREATE INDEX dataset_rows_k6 ON dataset_rows(dataset, k6, t, id) WHERE k6 IS NOT NULL;
      CREATE INDEX dataset_rows_k7 ON dataset_rows(dataset, k7, t, id) WHERE k7 IS NOT NULL;
      CREATE INDEX dataset_rows_k8 ON dataset_rows(dataset, k8, t, id) WHERE k8 IS NOT NULL;
      CREATE INDEX dataset_rows_k9 ON dataset_rows(dataset, k9, t, id) WHERE k9 IS NOT NULL;
      CREATE INDEX dataset_rows_k10 ON dataset_rows(dataset, k10, t, id) WHERE k10 IS NOT NULL;
      CREATE INDEX dataset_rows_k11 ON dataset_rows(dataset, k11, t, id) WHERE k11 IS NOT NULL;
      CREATE INDEX dataset_rows_k12 ON dataset_rows(dataset, k12, t, id) WHERE k12 IS NOT NULL;
      ALTER TABLE dataset_sources ADD COLUMN entity_fields TEXT;
    `,
  },
  {
    version: 7,
    name: 'loads beside the live rows, swapped in',
    // rows_key: the dataset_rows.dataset value the live rows are stored under (NULL: the dataset's own
    // key). A load writes under a new key in short transactions, then swaps rows_key in one. Keys not
    // served are listed in dataset_loads until their rows are deleted (row-loads.ts): a load under way
    // (loader_pid, its process) and the keys that swaps replaced or failed loads left (loader_pid NULL).
    sql: `
      ALTER TABLE dataset_sources ADD COLUMN rows_key TEXT;
      CREATE TABLE dataset_loads (
        rows_key TEXT PRIMARY KEY,
        dataset TEXT NOT NULL,
        run_id INTEGER,
        started_at INTEGER NOT NULL,
        loader_pid INTEGER
      );
      ALTER TABLE import_runs ADD COLUMN outcome TEXT NOT NULL DEFAULT 'swapped'
        CHECK (outcome IN ('loading', 'swapped', 'failed', 'interrupted'));
      ALTER TABLE import_runs ADD COLUMN swapped_at INTEGER;
      ALTER TABLE import_runs ADD COLUMN error TEXT;
    `,
  },
  {
    version: 8,
    name: 'collectors',
    // Each source's cursor and health (collector_state), and every run (collection_runs): what
    // system/data-collection-log, sync-metadata and backfill-state serve (src/domain/collections.ts).
    sql: `
      CREATE TABLE collector_state (
        source TEXT PRIMARY KEY,
        cursor TEXT NOT NULL,
        last_run_at INTEGER,
        last_success_at INTEGER,
        last_error TEXT,
        failures INTEGER NOT NULL,
        paused_until INTEGER,
        claimed_slot INTEGER
      );
      CREATE TABLE collection_runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        source TEXT NOT NULL,
        started_at INTEGER NOT NULL,
        finished_at INTEGER NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'partial', 'failed')),
        datasets TEXT NOT NULL,
        rows_new INTEGER NOT NULL,
        rows_changed INTEGER NOT NULL,
        rows_rejected INTEGER NOT NULL,
        requests INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        not_modified INTEGER NOT NULL,
        error TEXT
      );
      CREATE INDEX collection_runs_source ON collection_runs (source, id);
    `,
  },
  {
    version: 9,
    name: 'token purchases and requests',
    // Two more kinds of ledger entry (purchase, purchase_refund): SQLite cannot change a CHECK in
    // place, so the table is copied into its new definition (no table references it; ids kept).
    sql: `
      CREATE TABLE ledger_entries_next (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        wallet_id TEXT NOT NULL REFERENCES wallets(id),
        kind TEXT NOT NULL CHECK (kind IN ('grant', 'topup', 'monthly_credit', 'burn', 'refund', 'adjustment', 'purchase', 'purchase_refund')),
        amount_micros INTEGER NOT NULL,
        balance_after_micros INTEGER NOT NULL CHECK (balance_after_micros >= 0),
        created_at INTEGER NOT NULL,
        request_id TEXT,
        idempotency_key TEXT,
        memo TEXT
      );
      INSERT INTO ledger_entries_next SELECT * FROM ledger_entries;
      DROP TRIGGER ledger_entries_no_update;
      DROP TRIGGER ledger_entries_no_delete;
      DROP TABLE ledger_entries;
      ALTER TABLE ledger_entries_next RENAME TO ledger_entries;
      CREATE INDEX ledger_entries_wallet ON ledger_entries(wallet_id, id);
      CREATE UNIQUE INDEX ledger_entries_idempotency ON ledger_entries(wallet_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
      CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
        BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
      CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
        BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
      CREATE TABLE token_purchases (
        payment_intent TEXT PRIMARY KEY,
        session_id TEXT NOT NULL UNIQUE,
        account_id TEXT NOT NULL,
        wallet_id TEXT NOT NULL REFERENCES wallets(id),
        pack_id TEXT NOT NULL,
        tokens INTEGER NOT NULL CHECK (tokens > 0),
        amount_cents INTEGER NOT NULL,
        currency TEXT NOT NULL,
        entry_id TEXT NOT NULL,
        reclaimed_tokens INTEGER NOT NULL DEFAULT 0,
        shortfall_micros INTEGER NOT NULL DEFAULT 0,
        receipt_url TEXT,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX token_purchases_account ON token_purchases (account_id, created_at);
      CREATE TABLE token_refunds (
        refund_key TEXT PRIMARY KEY,
        payment_intent TEXT NOT NULL REFERENCES token_purchases(payment_intent),
        tokens INTEGER NOT NULL,
        taken_micros INTEGER NOT NULL,
        shortfall_micros INTEGER NOT NULL,
        at INTEGER NOT NULL
      );
      CREATE TABLE token_requests (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        wallet_id TEXT NOT NULL REFERENCES wallets(id),
        pack_id TEXT NOT NULL,
        tokens INTEGER NOT NULL CHECK (tokens > 0),
        note TEXT,
        status TEXT NOT NULL CHECK (status IN ('open', 'credited', 'declined')),
        reason TEXT,
        created_at INTEGER NOT NULL,
        settled_at INTEGER,
        entry_id TEXT
      );
      CREATE INDEX token_requests_account ON token_requests (account_id, created_at);
      CREATE INDEX token_requests_status ON token_requests (status, created_at);
    `,
  },
  {
    version: 10,
    name: 'idempotent requests',
    // The answer of a request sent with an Idempotency-Key, per credential (scope), for its retries.
    sql: `
      CREATE TABLE idempotent_requests (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'done')),
        response TEXT,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (scope, key)
      );
      CREATE INDEX idempotent_requests_created ON idempotent_requests (created_at);
    `,
  },
  {
    version: 11,
    name: 'low-balance threshold',
    sql: `ALTER TABLE accounts ADD COLUMN low_balance_micros INTEGER CHECK (low_balance_micros >= 0);`,
  },
  {
    version: 12,
    name: 'oauth',
    // The OAuth server's records (the library's models as JSON) and the connections accounts approved.
    sql: `
      CREATE TABLE oauth_records (
        model TEXT NOT NULL,
        id TEXT NOT NULL,
        payload TEXT NOT NULL,
        grant_id TEXT,
        uid TEXT,
        user_code TEXT,
        expires_at INTEGER,
        consumed_at INTEGER,
        PRIMARY KEY (model, id)
      );
      CREATE INDEX oauth_records_grant ON oauth_records (grant_id) WHERE grant_id IS NOT NULL;
      CREATE INDEX oauth_records_uid ON oauth_records (model, uid) WHERE uid IS NOT NULL;
      CREATE INDEX oauth_records_expires ON oauth_records (expires_at) WHERE expires_at IS NOT NULL;
      CREATE TABLE oauth_connections (
        key_id TEXT PRIMARY KEY REFERENCES api_keys(id),
        account_id TEXT NOT NULL,
        client_id TEXT NOT NULL,
        client_name TEXT NOT NULL,
        redirect_host TEXT NOT NULL,
        created_at INTEGER NOT NULL
      );
      CREATE INDEX oauth_connections_account ON oauth_connections (account_id, created_at);
    `,
  },
  {
    version: 13,
    name: 'password resets',
    // A reset link's token is stored as its SHA-256 digest only; the sessions index ends an account's
    // sessions at once when its password is reset.
    sql: `
      CREATE TABLE password_resets (
        digest TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      );
      CREATE INDEX password_resets_account ON password_resets (account_id) WHERE used_at IS NULL;
      CREATE INDEX sessions_account ON sessions (account_id) WHERE revoked_at IS NULL;
    `,
  },
  {
    version: 14,
    name: 'ledger entries and usage events without AUTOINCREMENT',
    // A read writes one ledger entry and one usage event; with AUTOINCREMENT each insert also rewrote
    // its table's sqlite_sequence row, two more B-tree writes per read (a fifth of a debit's CPU). Rows
    // of neither table are ever deleted (a trigger refuses it for entries; usage events are kept), so
    // a plain rowid (the largest plus one) goes on growing as the ids did. Copied as in version 9.
    sql: `
      CREATE TABLE ledger_entries_next (
        id INTEGER PRIMARY KEY,
        wallet_id TEXT NOT NULL REFERENCES wallets(id),
        kind TEXT NOT NULL CHECK (kind IN ('grant', 'topup', 'monthly_credit', 'burn', 'refund', 'adjustment', 'purchase', 'purchase_refund')),
        amount_micros INTEGER NOT NULL,
        balance_after_micros INTEGER NOT NULL CHECK (balance_after_micros >= 0),
        created_at INTEGER NOT NULL,
        request_id TEXT,
        idempotency_key TEXT,
        memo TEXT
      );
      INSERT INTO ledger_entries_next SELECT * FROM ledger_entries;
      DROP TRIGGER ledger_entries_no_update;
      DROP TRIGGER ledger_entries_no_delete;
      DROP TABLE ledger_entries;
      ALTER TABLE ledger_entries_next RENAME TO ledger_entries;
      CREATE INDEX ledger_entries_wallet ON ledger_entries(wallet_id, id);
      CREATE UNIQUE INDEX ledger_entries_idempotency ON ledger_entries(wallet_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
      CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE ON ledger_entries
        BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
      CREATE TRIGGER ledger_entries_no_delete BEFORE DELETE ON ledger_entries
        BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
      CREATE TABLE usage_events_next (
        id INTEGER PRIMARY KEY,
        request_id TEXT NOT NULL,
        key_id TEXT,
        account_id TEXT,
        wallet_id TEXT NOT NULL,
        dataset TEXT NOT NULL,
        channel TEXT NOT NULL,
        list_cost_micros INTEGER NOT NULL,
        cost_micros INTEGER NOT NULL,
        burned_micros INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        rows INTEGER NOT NULL,
        at INTEGER NOT NULL
      );
      INSERT INTO usage_events_next SELECT * FROM usage_events;
      DROP TABLE usage_events;
      ALTER TABLE usage_events_next RENAME TO usage_events;
      CREATE INDEX usage_events_account ON usage_events(account_id, id);
      CREATE INDEX usage_events_key ON usage_events(key_id, at, burned_micros);
    `,
  },
];
