/**
 * Versioned schema of the PostgreSQL store. Append new versions; never edit an applied one.
 * Money is bigint micro-tokens; instants are bigint milliseconds since the epoch (the port's numbers).
 * Text that is compared or ordered (row times, keyset positions) uses the "C" collation, so ordering is
 * bytewise like SQLite's and does not depend on the server's locale.
 */
export const postgresMigrations: readonly { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'accounts, keys, wallets, ledger, usage, dataset rows',
    sql: `
      CREATE TABLE wallets (
        id text PRIMARY KEY,
        account_id text,
        balance_micros bigint NOT NULL DEFAULT 0 CONSTRAINT wallets_balance_never_negative CHECK (balance_micros >= 0),
        burn_month text NOT NULL,
        burn_month_micros bigint NOT NULL DEFAULT 0 CHECK (burn_month_micros >= 0)
      );
      CREATE TABLE accounts (
        id text PRIMARY KEY,
        email text UNIQUE,
        password_hash text,
        plan text NOT NULL DEFAULT 'standard' CHECK (plan IN ('standard', 'early_bird')),
        package_id text,
        wallet_id text NOT NULL REFERENCES wallets(id),
        created_at bigint NOT NULL,
        public_test_started_at bigint
      );
      CREATE TABLE api_keys (
        id text PRIMARY KEY,
        kind text NOT NULL CHECK (kind IN ('sandbox', 'public_test', 'live')),
        digest text NOT NULL UNIQUE,
        display_prefix text NOT NULL,
        name text,
        account_id text REFERENCES accounts(id),
        wallet_id text NOT NULL REFERENCES wallets(id),
        created_at bigint NOT NULL,
        expires_at bigint,
        revoked_at bigint,
        daily_cap_micros bigint,
        monthly_cap_micros bigint
      );
      CREATE INDEX api_keys_account ON api_keys (account_id, kind);
      CREATE TABLE ledger_entries (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        wallet_id text NOT NULL REFERENCES wallets(id),
        kind text NOT NULL CHECK (kind IN ('grant', 'topup', 'monthly_credit', 'burn', 'refund', 'adjustment')),
        amount_micros bigint NOT NULL,
        balance_after_micros bigint NOT NULL CHECK (balance_after_micros >= 0),
        created_at bigint NOT NULL,
        request_id text,
        idempotency_key text,
        memo text
      );
      CREATE INDEX ledger_entries_wallet ON ledger_entries (wallet_id, id);
      CREATE INDEX ledger_entries_request ON ledger_entries (request_id) WHERE request_id IS NOT NULL;
      CREATE UNIQUE INDEX ledger_entries_idempotency ON ledger_entries (wallet_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
      CREATE FUNCTION ledger_entries_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'ledger entries are append-only'; END;
      $$;
      CREATE TRIGGER ledger_entries_no_update BEFORE UPDATE OR DELETE ON ledger_entries
        FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only();
      CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_append_only();
      CREATE TABLE usage_events (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        request_id text NOT NULL,
        key_id text,
        account_id text,
        wallet_id text NOT NULL,
        dataset text NOT NULL,
        channel text NOT NULL,
        list_cost_micros bigint NOT NULL,
        cost_micros bigint NOT NULL,
        burned_micros bigint NOT NULL,
        outcome text NOT NULL,
        rows integer NOT NULL,
        at bigint NOT NULL
      );
      CREATE INDEX usage_events_account ON usage_events (account_id, id);
      CREATE INDEX usage_events_key ON usage_events (key_id, id);
      -- Spending caps sum a key's burns since a day or month start inside the debit: index-only.
      CREATE INDEX usage_events_key_spend ON usage_events (key_id, at) INCLUDE (burned_micros);
      CREATE TABLE dataset_rows (
        dataset text COLLATE "C" NOT NULL,
        id integer NOT NULL,
        t text COLLATE "C" NOT NULL,
        data json NOT NULL,
        PRIMARY KEY (dataset, id)
      );
      CREATE INDEX dataset_rows_time ON dataset_rows (dataset, t, id);
      CREATE TABLE sessions (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        revoked_at bigint
      );
      CREATE TABLE dataset_sources (
        dataset text PRIMARY KEY,
        source text NOT NULL CHECK (source IN ('sample', 'import')),
        row_count integer NOT NULL,
        loaded_at bigint NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'group-commit debit function',
    // A batch of debits (and zero-burn usage records) in one round trip and one transaction. Each debit
    // is the same conditional UPDATE ... WHERE balance_micros >= amount as a lone one, applied in the
    // order given (the adapter sorts by wallet, so concurrent batches lock rows in one order); a refused
    // debit returns no row and writes nothing.
    sql: `
      CREATE FUNCTION tmd_debit_batch(
        p_wallet text[], p_amount bigint[], p_month text[], p_at bigint[], p_request text[], p_key text[],
        p_account text[], p_dataset text[], p_channel text[], p_list bigint[], p_cost bigint[], p_burned bigint[],
        p_outcome text[], p_rows integer[]
      ) RETURNS TABLE (o_index integer, o_balance bigint, o_month_micros bigint, o_entry bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        i integer;
      BEGIN
        FOR i IN 1 .. coalesce(array_length(p_wallet, 1), 0) LOOP
          o_index := i;
          o_balance := NULL;
          o_month_micros := NULL;
          o_entry := NULL;
          IF p_amount[i] > 0 THEN
            UPDATE wallets w
               SET balance_micros = w.balance_micros - p_amount[i],
                   burn_month_micros = CASE WHEN w.burn_month = p_month[i]
                                            THEN w.burn_month_micros + p_amount[i] ELSE p_amount[i] END,
                   burn_month = p_month[i]
             WHERE w.id = p_wallet[i] AND w.balance_micros >= p_amount[i]
            RETURNING w.balance_micros, w.burn_month_micros INTO o_balance, o_month_micros;
            CONTINUE WHEN NOT FOUND;
            INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id)
            VALUES (p_wallet[i], 'burn', -p_amount[i], o_balance, p_at[i], p_request[i])
            RETURNING id INTO o_entry;
          END IF;
          INSERT INTO usage_events (request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros,
                                    cost_micros, burned_micros, outcome, rows, at)
          VALUES (p_request[i], p_key[i], p_account[i], p_wallet[i], p_dataset[i], p_channel[i], p_list[i], p_cost[i],
                  p_burned[i], p_outcome[i], p_rows[i], p_at[i]);
          RETURN NEXT;
        END LOOP;
      END $$;
    `,
  },
];
