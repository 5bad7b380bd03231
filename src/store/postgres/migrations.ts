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
  {
    version: 3,
    name: 'group-commit debit function: entries and usage events written per batch',
    // Same signature, same result, same debits: each is still its own conditional UPDATE ... WHERE
    // balance_micros >= amount, in the order given, in one transaction. What changes is the writing of
    // the rows that go with them: one INSERT of the batch's ledger entries and one of its usage events
    // instead of two statements per debit, whose executor start-up cost PostgreSQL more than the rows
    // (about 20 us a debit). An entry goes back to its debit by (wallet, balance after): within a batch
    // every burn of a wallet lowers its balance, and the row lock holds until COMMIT, so the pair is unique.
    sql: `
      CREATE OR REPLACE FUNCTION tmd_debit_batch(
        p_wallet text[], p_amount bigint[], p_month text[], p_at bigint[], p_request text[], p_key text[],
        p_account text[], p_dataset text[], p_channel text[], p_list bigint[], p_cost bigint[], p_burned bigint[],
        p_outcome text[], p_rows integer[]
      ) RETURNS TABLE (o_index integer, o_balance bigint, o_month_micros bigint, o_entry bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        n integer := coalesce(array_length(p_wallet, 1), 0);
        v_balance bigint[] := array_fill(NULL::bigint, ARRAY[n]);
        v_month bigint[] := array_fill(NULL::bigint, ARRAY[n]);
        v_b bigint;
        v_m bigint;
      BEGIN
        FOR i IN 1 .. n LOOP
          CONTINUE WHEN p_amount[i] <= 0;
          UPDATE wallets w
             SET balance_micros = w.balance_micros - p_amount[i],
                 burn_month_micros = CASE WHEN w.burn_month = p_month[i]
                                          THEN w.burn_month_micros + p_amount[i] ELSE p_amount[i] END,
                 burn_month = p_month[i]
           WHERE w.id = p_wallet[i] AND w.balance_micros >= p_amount[i]
          RETURNING w.balance_micros, w.burn_month_micros INTO v_b, v_m;
          IF FOUND THEN
            v_balance[i] := v_b;
            v_month[i] := v_m;
          END IF;
        END LOOP;
        -- Refused debits (no balance) write nothing and return no row; zero-burn records (amount 0)
        -- write their usage event only.
        RETURN QUERY
        WITH item AS (
          SELECT x.* FROM unnest(p_wallet, p_amount, p_at, p_request, v_balance, v_month)
                 WITH ORDINALITY AS x(x_wallet, x_amount, x_at, x_request, x_balance, x_month, x_idx)
           WHERE x.x_amount = 0 OR x.x_balance IS NOT NULL
        ), entry AS (
          INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id)
          SELECT item.x_wallet, 'burn', -item.x_amount, item.x_balance, item.x_at, item.x_request
            FROM item WHERE item.x_amount > 0 ORDER BY item.x_idx
          RETURNING ledger_entries.id, ledger_entries.wallet_id, ledger_entries.balance_after_micros
        ), used AS (
          INSERT INTO usage_events (request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros,
                                    cost_micros, burned_micros, outcome, rows, at)
          SELECT u.u_request, u.u_key, u.u_account, u.u_wallet, u.u_dataset, u.u_channel, u.u_list, u.u_cost,
                 u.u_burned, u.u_outcome, u.u_rows, u.u_at
            FROM unnest(p_request, p_key, p_account, p_wallet, p_dataset, p_channel, p_list, p_cost, p_burned,
                        p_outcome, p_rows, p_at, p_amount, v_balance)
                 WITH ORDINALITY AS u(u_request, u_key, u_account, u_wallet, u_dataset, u_channel, u_list, u_cost,
                                      u_burned, u_outcome, u_rows, u_at, u_amount, u_balance, u_idx)
           WHERE u.u_amount = 0 OR u.u_balance IS NOT NULL
           ORDER BY u.u_idx
        )
        SELECT item.x_idx::integer, item.x_balance, item.x_month, entry.id
          FROM item LEFT JOIN entry
            ON entry.wallet_id = item.x_wallet AND entry.balance_after_micros = item.x_balance
         ORDER BY item.x_idx;
      END $$;
    `,
  },
  {
    version: 4,
    name: 'stored CSV lines of dataset rows',
    // As SQLite migration 3: each row's CSV cells rendered once at load, over dataset_sources.csv_columns.
    sql: `
      ALTER TABLE dataset_rows ADD COLUMN csv text;
      ALTER TABLE dataset_sources ADD COLUMN csv_columns text;
    `,
  },
  {
    version: 5,
    name: 'group-commit debit function: one conditional UPDATE per wallet and batch',
    // Same signature, same result. The adapter sorts a batch by wallet, so a wallet's debits are one
    // run. A run whose debits share a month is applied as one conditional UPDATE of its total, WHERE
    // balance_micros >= total (the CHECK stays behind it); each debit's balance and month burn after it
    // follow from the run's result, exactly as if applied one by one. If the balance does not cover
    // the total, the run falls back to one conditional UPDATE per debit in order, as in version 3, so
    // which debits are refused does not change. On one busy wallet this replaces a batch's k updates
    // of the same row (each a new row version in the same transaction) with one.
    // The index on ledger_entries.request_id goes: no query reads it, and every burn paid for it.
    sql: `
      DROP INDEX IF EXISTS ledger_entries_request;
      CREATE OR REPLACE FUNCTION tmd_debit_batch(
        p_wallet text[], p_amount bigint[], p_month text[], p_at bigint[], p_request text[], p_key text[],
        p_account text[], p_dataset text[], p_channel text[], p_list bigint[], p_cost bigint[], p_burned bigint[],
        p_outcome text[], p_rows integer[]
      ) RETURNS TABLE (o_index integer, o_balance bigint, o_month_micros bigint, o_entry bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        n integer := coalesce(array_length(p_wallet, 1), 0);
        v_balance bigint[] := array_fill(NULL::bigint, ARRAY[n]);
        v_month bigint[] := array_fill(NULL::bigint, ARRAY[n]);
        v_b bigint;
        v_m bigint;
        i integer := 1;
        j integer;
        v_total bigint;
        v_left bigint;
        v_one_month boolean;
      BEGIN
        WHILE i <= n LOOP
          IF p_amount[i] <= 0 THEN
            i := i + 1;
            CONTINUE;
          END IF;
          -- The run of this wallet's items from i (zero-burn records in it are skipped).
          j := i;
          v_total := 0;
          v_one_month := true;
          WHILE j <= n AND p_wallet[j] = p_wallet[i] LOOP
            IF p_amount[j] > 0 THEN
              v_total := v_total + p_amount[j];
              v_one_month := v_one_month AND p_month[j] = p_month[i];
            END IF;
            j := j + 1;
          END LOOP;
          v_b := NULL;
          IF v_one_month THEN
            UPDATE wallets w
               SET balance_micros = w.balance_micros - v_total,
                   burn_month_micros = CASE WHEN w.burn_month = p_month[i]
                                            THEN w.burn_month_micros + v_total ELSE v_total END,
                   burn_month = p_month[i]
             WHERE w.id = p_wallet[i] AND w.balance_micros >= v_total
            RETURNING w.balance_micros, w.burn_month_micros INTO v_b, v_m;
          END IF;
          IF v_b IS NOT NULL THEN
            -- Every debit of the run went through: the figures after each, in order.
            v_left := v_total;
            FOR k IN i .. j - 1 LOOP
              CONTINUE WHEN p_amount[k] <= 0;
              v_left := v_left - p_amount[k];
              v_balance[k] := v_b + v_left;
              v_month[k] := v_m - v_left;
            END LOOP;
          ELSE
            FOR k IN i .. j - 1 LOOP
              CONTINUE WHEN p_amount[k] <= 0;
              UPDATE wallets w
                 SET balance_micros = w.balance_micros - p_amount[k],
                     burn_month_micros = CASE WHEN w.burn_month = p_month[k]
                                              THEN w.burn_month_micros + p_amount[k] ELSE p_amount[k] END,
                     burn_month = p_month[k]
               WHERE w.id = p_wallet[k] AND w.balance_micros >= p_amount[k]
              RETURNING w.balance_micros, w.burn_month_micros INTO v_b, v_m;
              IF FOUND THEN
                v_balance[k] := v_b;
                v_month[k] := v_m;
              END IF;
            END LOOP;
          END IF;
          i := j;
        END LOOP;
        -- Refused debits (no balance) write nothing and return no row; zero-burn records (amount 0)
        -- write their usage event only.
        RETURN QUERY
        WITH item AS (
          SELECT x.* FROM unnest(p_wallet, p_amount, p_at, p_request, v_balance, v_month)
                 WITH ORDINALITY AS x(x_wallet, x_amount, x_at, x_request, x_balance, x_month, x_idx)
           WHERE x.x_amount = 0 OR x.x_balance IS NOT NULL
        ), entry AS (
          INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id)
          SELECT item.x_wallet, 'burn', -item.x_amount, item.x_balance, item.x_at, item.x_request
            FROM item WHERE item.x_amount > 0 ORDER BY item.x_idx
          RETURNING ledger_entries.id, ledger_entries.wallet_id, ledger_entries.balance_after_micros
        ), used AS (
          INSERT INTO usage_events (request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros,
                                    cost_micros, burned_micros, outcome, rows, at)
          SELECT u.u_request, u.u_key, u.u_account, u.u_wallet, u.u_dataset, u.u_channel, u.u_list, u.u_cost,
                 u.u_burned, u.u_outcome, u.u_rows, u.u_at
            FROM unnest(p_request, p_key, p_account, p_wallet, p_dataset, p_channel, p_list, p_cost, p_burned,
                        p_outcome, p_rows, p_at, p_amount, v_balance)
                 WITH ORDINALITY AS u(u_request, u_key, u_account, u_wallet, u_dataset, u_channel, u_list, u_cost,
                                      u_burned, u_outcome, u_rows, u_at, u_amount, u_balance, u_idx)
           WHERE u.u_amount = 0 OR u.u_balance IS NOT NULL
           ORDER BY u.u_idx
        )
        SELECT item.x_idx::integer, item.x_balance, item.x_month, entry.id
          FROM item LEFT JOIN entry
            ON entry.wallet_id = item.x_wallet AND entry.balance_after_micros = item.x_balance
         ORDER BY item.x_idx;
      END $$;
    `,
  },
  {
    version: 6,
    name: 'debits never move a wallet back to an earlier month',
    // A read that began before a UTC month change can commit after reads of the new month: its debit
    // used to set the wallet's month back and restart the month's burn from its own amount (the new
    // month's burn, which the tier follows, was lost). Now a debit of a month the wallet has left
    // counts in that month only: the month never moves backwards and the newer month's burn stays.
    // Same signature and result columns, so nodes of the previous version keep their prepared calls and
    // read every figure: o_month_micros is 0 for such a debit (a debit counted in its own month always
    // leaves a positive month burn, so 0 says "not the wallet's month"). Until they are upgraded, those
    // nodes' own single-debit statement still moves the month back, as before.
    sql: `
      CREATE OR REPLACE FUNCTION tmd_debit_batch(
        p_wallet text[], p_amount bigint[], p_month text[], p_at bigint[], p_request text[], p_key text[],
        p_account text[], p_dataset text[], p_channel text[], p_list bigint[], p_cost bigint[], p_burned bigint[],
        p_outcome text[], p_rows integer[]
      ) RETURNS TABLE (o_index integer, o_balance bigint, o_month_micros bigint, o_entry bigint)
      LANGUAGE plpgsql AS $$
      DECLARE
        n integer := coalesce(array_length(p_wallet, 1), 0);
        v_balance bigint[] := array_fill(NULL::bigint, ARRAY[n]);
        v_month bigint[] := array_fill(NULL::bigint, ARRAY[n]);
        v_bm text;
        v_b bigint;
        v_m bigint;
        i integer := 1;
        j integer;
        v_total bigint;
        v_left bigint;
        v_one_month boolean;
      BEGIN
        WHILE i <= n LOOP
          IF p_amount[i] <= 0 THEN
            i := i + 1;
            CONTINUE;
          END IF;
          -- The run of this wallet's items from i (zero-burn records in it are skipped).
          j := i;
          v_total := 0;
          v_one_month := true;
          WHILE j <= n AND p_wallet[j] = p_wallet[i] LOOP
            IF p_amount[j] > 0 THEN
              v_total := v_total + p_amount[j];
              v_one_month := v_one_month AND p_month[j] = p_month[i];
            END IF;
            j := j + 1;
          END LOOP;
          v_b := NULL;
          IF v_one_month THEN
            UPDATE wallets w
               SET balance_micros = w.balance_micros - v_total,
                   burn_month_micros = CASE WHEN w.burn_month = p_month[i] THEN w.burn_month_micros + v_total
                                            WHEN w.burn_month > p_month[i] THEN w.burn_month_micros
                                            ELSE v_total END,
                   burn_month = GREATEST(w.burn_month, p_month[i])
             WHERE w.id = p_wallet[i] AND w.balance_micros >= v_total
            RETURNING w.balance_micros, w.burn_month_micros, w.burn_month INTO v_b, v_m, v_bm;
          END IF;
          IF v_b IS NOT NULL THEN
            -- Every debit of the run went through: the figures after each, in order.
            v_left := v_total;
            FOR k IN i .. j - 1 LOOP
              CONTINUE WHEN p_amount[k] <= 0;
              v_left := v_left - p_amount[k];
              v_balance[k] := v_b + v_left;
              -- A run of a month the wallet has already left counts in that month, not in the newer one.
              v_month[k] := CASE WHEN v_bm = p_month[i] THEN v_m - v_left ELSE 0 END;
            END LOOP;
          ELSE
            FOR k IN i .. j - 1 LOOP
              CONTINUE WHEN p_amount[k] <= 0;
              UPDATE wallets w
                 SET balance_micros = w.balance_micros - p_amount[k],
                     burn_month_micros = CASE WHEN w.burn_month = p_month[k] THEN w.burn_month_micros + p_amount[k]
                                              WHEN w.burn_month > p_month[k] THEN w.burn_month_micros
                                              ELSE p_amount[k] END,
                     burn_month = GREATEST(w.burn_month, p_month[k])
               WHERE w.id = p_wallet[k] AND w.balance_micros >= p_amount[k]
              RETURNING w.balance_micros, w.burn_month_micros, w.burn_month INTO v_b, v_m, v_bm;
              IF FOUND THEN
                v_balance[k] := v_b;
                v_month[k] := CASE WHEN v_bm = p_month[k] THEN v_m ELSE 0 END;
              END IF;
            END LOOP;
          END IF;
          i := j;
        END LOOP;
        -- Refused debits (no balance) write nothing and return no row; zero-burn records (amount 0)
        -- write their usage event only.
        RETURN QUERY
        WITH item AS (
          SELECT x.* FROM unnest(p_wallet, p_amount, p_at, p_request, v_balance, v_month)
                 WITH ORDINALITY AS x(x_wallet, x_amount, x_at, x_request, x_balance, x_month, x_idx)
           WHERE x.x_amount = 0 OR x.x_balance IS NOT NULL
        ), entry AS (
          INSERT INTO ledger_entries (wallet_id, kind, amount_micros, balance_after_micros, created_at, request_id)
          SELECT item.x_wallet, 'burn', -item.x_amount, item.x_balance, item.x_at, item.x_request
            FROM item WHERE item.x_amount > 0 ORDER BY item.x_idx
          RETURNING ledger_entries.id, ledger_entries.wallet_id, ledger_entries.balance_after_micros
        ), used AS (
          INSERT INTO usage_events (request_id, key_id, account_id, wallet_id, dataset, channel, list_cost_micros,
                                    cost_micros, burned_micros, outcome, rows, at)
          SELECT u.u_request, u.u_key, u.u_account, u.u_wallet, u.u_dataset, u.u_channel, u.u_list, u.u_cost,
                 u.u_burned, u.u_outcome, u.u_rows, u.u_at
            FROM unnest(p_request, p_key, p_account, p_wallet, p_dataset, p_channel, p_list, p_cost, p_burned,
                        p_outcome, p_rows, p_at, p_amount, v_balance)
                 WITH ORDINALITY AS u(u_request, u_key, u_account, u_wallet, u_dataset, u_channel, u_list, u_cost,
                                      u_burned, u_outcome, u_rows, u_at, u_amount, u_balance, u_idx)
           WHERE u.u_amount = 0 OR u.u_balance IS NOT NULL
           ORDER BY u.u_idx
        )
        SELECT item.x_idx::integer, item.x_balance, item.x_month, entry.id
          FROM item LEFT JOIN entry
            ON entry.wallet_id = item.x_wallet AND entry.balance_after_micros = item.x_balance
         ORDER BY item.x_idx;
      END $$;
    `,
  },
  {
    version: 7,
    name: 'Workbench analyses and their runs',
    // Runs outlive their analysis (no foreign key to it): a deleted analysis's runs still count toward the
    // day's fair use. analysis_runs_account serves both the day's count and the reuse lookup.
    sql: `
      CREATE TABLE analyses (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        name text NOT NULL,
        spec text NOT NULL,
        transcript text,
        planner text,
        created_at bigint NOT NULL,
        updated_at bigint NOT NULL
      );
      CREATE INDEX analyses_account ON analyses(account_id, updated_at);
      CREATE TABLE analysis_runs (
        id text PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        analysis_id text,
        kind text NOT NULL CHECK (kind IN ('run', 'ask')),
        inputs_hash text,
        started_at bigint NOT NULL,
        status text NOT NULL CHECK (status IN ('running', 'done', 'failed')),
        reads integer NOT NULL DEFAULT 0,
        burned_micros bigint NOT NULL DEFAULT 0,
        result text
      );
      CREATE INDEX analysis_runs_account ON analysis_runs(account_id, started_at);
    `,
  },
  {
    version: 8,
    name: 'natural keys of imported rows, and the record of each import',
    // As SQLite migration 5: nk replaces a row imported again; import_id names the run behind each row.
    sql: `
      ALTER TABLE dataset_rows ADD COLUMN nk text;
      ALTER TABLE dataset_rows ADD COLUMN import_id bigint;
      CREATE UNIQUE INDEX dataset_rows_natural_key ON dataset_rows (dataset, nk) WHERE nk IS NOT NULL;
      CREATE TABLE import_runs (
        id bigserial PRIMARY KEY,
        dataset text NOT NULL,
        importer text NOT NULL,
        source_name text NOT NULL,
        file_name text NOT NULL,
        sha256 text NOT NULL,
        licence text NOT NULL,
        attribution text,
        imported_at bigint NOT NULL,
        rows_read integer NOT NULL,
        rows_inserted integer NOT NULL,
        rows_replaced integer NOT NULL,
        rows_rejected integer NOT NULL,
        first_t text,
        last_t text
      );
      CREATE INDEX import_runs_dataset ON import_runs (dataset, id);
    `,
  },
  {
    version: 9,
    name: 'entity key columns, each with its index',
    // k1..k12: the dataset's entity fields in catalog order (row-scan.ts), written at load and re-keyed by
    // syncLayouts when the catalog's order changes; entity_fields names the order the keys follow. Each
    // index is partial: a dataset with one entity field pays for one index, not twelve.
    sql: `
      ALTER TABLE dataset_rows ADD COLUMN k1 text;
      ALTER TABLE dataset_rows ADD COLUMN k2 text;
      ALTER TABLE dataset_rows ADD COLUMN k3 text;
      ALTER TABLE dataset_rows ADD COLUMN k4 text;
      ALTER TABLE dataset_rows ADD COLUMN k5 text;
      ALTER TABLE dataset_rows ADD COLUMN k6 text;
      ALTER TABLE dataset_rows ADD COLUMN k7 text;
      ALTER TABLE dataset_rows ADD COLUMN k8 text;
      ALTER TABLE dataset_rows ADD COLUMN k9 text;
      ALTER TABLE dataset_rows ADD COLUMN k10 text;
      ALTER TABLE dataset_rows ADD COLUMN k11 text;
      ALTER TABLE dataset_rows ADD COLUMN k12 text;
      CREATE INDEX dataset_rows_k1 ON dataset_rows (dataset, k1, t, id) WHERE k1 IS NOT NULL;
      CREATE INDEX dataset_rows_k2 ON dataset_rows (dataset, k2, t, id) WHERE k2 IS NOT NULL;
      CREATE INDEX dataset_rows_k3 ON dataset_rows (dataset, k3, t, id) WHERE k3 IS NOT NULL;
      CREATE INDEX dataset_rows_k4 ON dataset_rows (dataset, k4, t, id) WHERE k4 IS NOT NULL;
      CREATE INDEX dataset_rows_k5 ON dataset_rows (dataset, k5, t, id) WHERE k5 IS NOT NULL;
      CREATE INDEX dataset_rows_k6 ON dataset_rows (dataset, k6, t, id) WHERE k6 IS NOT NULL;
      CREATE INDEX dataset_rows_k7 ON dataset_rows (dataset, k7, t, id) WHERE k7 IS NOT NULL;
      CREATE INDEX dataset_rows_k8 ON dataset_rows (dataset, k8, t, id) WHERE k8 IS NOT NULL;
      CREATE INDEX dataset_rows_k9 ON dataset_rows (dataset, k9, t, id) WHERE k9 IS NOT NULL;
      CREATE INDEX dataset_rows_k10 ON dataset_rows (dataset, k10, t, id) WHERE k10 IS NOT NULL;
      CREATE INDEX dataset_rows_k11 ON dataset_rows (dataset, k11, t, id) WHERE k11 IS NOT NULL;
      CREATE INDEX dataset_rows_k12 ON dataset_rows (dataset, k12, t, id) WHERE k12 IS NOT NULL;
      ALTER TABLE dataset_sources ADD COLUMN entity_fields text;
    `,
  },
  {
    version: 10,
    name: 'import outcomes',
    // A run is recorded as it starts (loading, with the loader's backend pid), then swapped, failed,
    // or interrupted when its backend is gone without either (the importing process was killed).
    sql: `
      ALTER TABLE import_runs ADD COLUMN outcome text NOT NULL DEFAULT 'swapped'
        CHECK (outcome IN ('loading', 'swapped', 'failed', 'interrupted'));
      ALTER TABLE import_runs ADD COLUMN swapped_at bigint;
      ALTER TABLE import_runs ADD COLUMN error text;
      ALTER TABLE import_runs ADD COLUMN loader_pid integer;
    `,
  },
  {
    version: 11,
    name: 'collectors',
    // Each source's cursor and health (collector_state), and every run (collection_runs): what
    // system/data-collection-log, sync-metadata and backfill-state serve (src/domain/collections.ts).
    sql: `
      CREATE TABLE collector_state (
        source TEXT PRIMARY KEY,
        cursor TEXT NOT NULL,
        last_run_at bigint,
        last_success_at bigint,
        last_error TEXT,
        failures INTEGER NOT NULL,
        paused_until bigint,
        claimed_slot bigint
      );
      CREATE TABLE collection_runs (
        id bigserial PRIMARY KEY,
        source TEXT NOT NULL,
        started_at bigint NOT NULL,
        finished_at bigint NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'partial', 'failed')),
        datasets TEXT NOT NULL,
        rows_new INTEGER NOT NULL,
        rows_changed INTEGER NOT NULL,
        rows_rejected INTEGER NOT NULL,
        requests INTEGER NOT NULL,
        bytes bigint NOT NULL,
        not_modified INTEGER NOT NULL,
        error TEXT
      );
      CREATE INDEX collection_runs_source ON collection_runs (source, id);
    `,
  },
  {
    version: 12,
    name: 'token purchases and requests',
    sql: `
      ALTER TABLE ledger_entries DROP CONSTRAINT ledger_entries_kind_check;
      ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_kind_check
        CHECK (kind IN ('grant', 'topup', 'monthly_credit', 'burn', 'refund', 'adjustment', 'purchase', 'purchase_refund'));
      CREATE TABLE token_purchases (
        payment_intent text PRIMARY KEY,
        session_id text NOT NULL UNIQUE,
        account_id text NOT NULL,
        wallet_id text NOT NULL REFERENCES wallets(id),
        pack_id text NOT NULL,
        tokens bigint NOT NULL CHECK (tokens > 0),
        amount_cents bigint NOT NULL,
        currency text NOT NULL,
        entry_id text NOT NULL,
        reclaimed_tokens bigint NOT NULL DEFAULT 0,
        shortfall_micros bigint NOT NULL DEFAULT 0,
        receipt_url text,
        created_at bigint NOT NULL
      );
      CREATE INDEX token_purchases_account ON token_purchases (account_id, created_at);
      CREATE TABLE token_refunds (
        refund_key text PRIMARY KEY,
        payment_intent text NOT NULL REFERENCES token_purchases(payment_intent),
        tokens bigint NOT NULL,
        taken_micros bigint NOT NULL,
        shortfall_micros bigint NOT NULL,
        at bigint NOT NULL
      );
      CREATE TABLE token_requests (
        id text PRIMARY KEY,
        account_id text NOT NULL,
        wallet_id text NOT NULL REFERENCES wallets(id),
        pack_id text NOT NULL,
        tokens bigint NOT NULL CHECK (tokens > 0),
        note text,
        status text NOT NULL CHECK (status IN ('open', 'credited', 'declined')),
        reason text,
        created_at bigint NOT NULL,
        settled_at bigint,
        entry_id text
      );
      CREATE INDEX token_requests_account ON token_requests (account_id, created_at);
      CREATE INDEX token_requests_status ON token_requests (status, created_at);
    `,
  },
  {
    version: 13,
    name: 'idempotent requests',
    // The answer of a request sent with an Idempotency-Key, per credential (scope), for its retries.
    sql: `
      CREATE TABLE idempotent_requests (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'done')),
        response TEXT,
        created_at bigint NOT NULL,
        PRIMARY KEY (scope, key)
      );
      CREATE INDEX idempotent_requests_created ON idempotent_requests (created_at);
    `,
  },
  {
    version: 14,
    name: 'low-balance threshold',
    sql: `ALTER TABLE accounts ADD COLUMN low_balance_micros bigint CHECK (low_balance_micros >= 0);`,
  },
  {
    version: 15,
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
        expires_at bigint,
        consumed_at bigint,
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
        created_at bigint NOT NULL
      );
      CREATE INDEX oauth_connections_account ON oauth_connections (account_id, created_at);
    `,
  },
  {
    version: 16,
    name: 'password resets',
    // A reset link's token is stored as its SHA-256 digest only; the sessions index ends an account's
    // sessions at once when its password is reset.
    sql: `
      CREATE TABLE password_resets (
        digest TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      );
      CREATE INDEX password_resets_account ON password_resets (account_id) WHERE used_at IS NULL;
      CREATE INDEX sessions_account ON sessions (account_id) WHERE revoked_at IS NULL;
    `,
  },
  {
    version: 17,
    name: 'one index on usage events by key',
    // Every read wrote a usage event into two indexes on key_id. A key's usage pages and sums are
    // served by usage_events_key_spend (key_id, at) or the primary key instead; spending caps keep
    // their index-only sum. One index fewer written per read.
    sql: `
      DROP INDEX IF EXISTS usage_events_key;
    `,
  },
  {
    version: 18,
    name: 'dataset rows partitioned by dataset',
    // One partition per dataset (partitions.ts): a large dataset's indexes no longer slow a small one's,
    // and a replacing load builds a new partition's indexes after its COPY, then swaps it in. The
    // indexes here are those partitionIndexes builds, for all twelve key columns as before. Key columns
    // compare bytewise ("C"): equality is the same, and their index builds sort about a tenth faster.
    // Moving a large store's rows takes minutes: no statement timeout for it.
    sql: `
      SET LOCAL statement_timeout = 0;
      SET LOCAL maintenance_work_mem = '1GB';
      ALTER TABLE dataset_rows RENAME TO dataset_rows_unpartitioned;
      CREATE TABLE dataset_rows (
        dataset text COLLATE "C" NOT NULL, id integer NOT NULL, t text COLLATE "C" NOT NULL, data json NOT NULL,
        csv text, nk text COLLATE "C", import_id bigint,
        k1 text COLLATE "C", k2 text COLLATE "C", k3 text COLLATE "C", k4 text COLLATE "C", k5 text COLLATE "C", k6 text COLLATE "C",
        k7 text COLLATE "C", k8 text COLLATE "C", k9 text COLLATE "C", k10 text COLLATE "C", k11 text COLLATE "C", k12 text COLLATE "C"
      ) PARTITION BY LIST (dataset);
      CREATE TABLE dataset_partitions (dataset text COLLATE "C" PRIMARY KEY, relname text NOT NULL);
      CREATE SEQUENCE dataset_partition_seq;
      DO $$
      DECLARE
        d text;
        rel text;
      BEGIN
        FOR d IN SELECT DISTINCT dataset FROM dataset_rows_unpartitioned LOOP
          rel := 'dataset_rows_p' || nextval('dataset_partition_seq');
          EXECUTE format('CREATE TABLE %I (LIKE dataset_rows, CONSTRAINT %I CHECK (dataset = %L))', rel, rel || '_dataset', d);
          EXECUTE format('INSERT INTO %I SELECT dataset, id, t, data, csv, nk, import_id, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12
            FROM dataset_rows_unpartitioned WHERE dataset = %L', rel, d);
          EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I PRIMARY KEY (id)', rel, rel || '_pkey');
          EXECUTE format('CREATE INDEX %I ON %I (t, id)', rel || '_time', rel);
          EXECUTE format('CREATE UNIQUE INDEX %I ON %I (nk) WHERE nk IS NOT NULL', rel || '_nk', rel);
          EXECUTE format('CREATE INDEX %I ON %I (k1, t, id) WHERE k1 IS NOT NULL', rel || '_k1', rel);
          EXECUTE format('CREATE INDEX %I ON %I (k2, t, id) WHERE k2 IS NOT NULL', rel || '_k2', rel);
          EXECUTE format('CREATE INDEX %I ON %I (k3, t, id) WHERE k3 IS NOT NULL', rel || '_k3', rel);
          EXECUTE format('CREATE INDEX %I ON %I (k4, t, id) WHERE k4 IS NOT NULL', rel || '_k4', rel);
          EXECUTE format('CREATE INDEX %I ON %I (k5, t, id) WHERE k5 IS NOT NULL', rel || '_k5', rel);
          EXECUTE format('CREATE INDEX %I ON %I (k6, t, id) WHERE k6 IS NOT NULL', rel || '_k6', rel);
          EXECUTE format('CREATE INDEX %I ON %I (k7, t, id) WHERE k7 IS NOT NULL', rel || '_k7', rel);
          EXECUTE format('CREATE INDEX %I ON %I (k8, t, id) WHERE k8 IS NOT NULL', rel || '_k8', rel);
          EXECUTE format('CREATE INDEX %I ON %I (k9, t, id) WHERE k9 IS NOT NULL', rel || '_k9', rel);
          EXECUTE format('CREATE INDEX %I ON %I (k10, t, id) WHERE k10 IS NOT NULL', rel || '_k10', rel);
          EXECUTE format('CREATE INDEX %I ON %I (k11, t, id) WHERE k11 IS NOT NULL', rel || '_k11', rel);
          EXECUTE format('CREATE INDEX %I ON %I (k12, t, id) WHERE k12 IS NOT NULL', rel || '_k12', rel);
          EXECUTE format('ALTER TABLE dataset_rows ATTACH PARTITION %I FOR VALUES IN (%L)', rel, d);
          INSERT INTO dataset_partitions (dataset, relname) VALUES (d, rel);
        END LOOP;
      END
      $$;
      DROP TABLE dataset_rows_unpartitioned;
    `,
  },
];
