/**
 * npm run bench:debits: ledger debits per second on PostgreSQL through PostgresStore.debit (the same
 * conditional statement, ledger entry and usage event as a metered read), for (i) many wallets and
 * (ii) one hot wallet. Every counted debit is committed. Runs in a fresh database it drops after.
 *   --duration=5 --concurrency=64 --wallets=1000 --database=postgres://postgres@127.0.0.1:5432/postgres
 */
import pg from 'pg';
import { newId } from '../src/domain/ids.ts';
import { PostgresStore } from '../src/store/postgres/postgres-store.ts';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const seconds = Number(args.get('duration') ?? 5);
const concurrency = Number(args.get('concurrency') ?? 64);
const walletCount = Number(args.get('wallets') ?? 1000);
const adminUrl =
  args.get('database') ?? process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
const name = `tmd_bench_${Date.now().toString(36)}`;
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(adminUrl);
url.pathname = `/${name}`;
const store = new PostgresStore(url.toString());
await store.migrate();

const month = new Date().toISOString().slice(0, 7);
const wallets: string[] = [];
for (let i = 0; i < walletCount; i++) {
  const id = newId('wal');
  await store.createWallet(id, null, month);
  await store.credit({ walletId: id, kind: 'topup', amountMicros: 10n ** 15n, at: Date.now() });
  wallets.push(id);
}

async function run(label: string, pick: () => string): Promise<number> {
  let done = 0;
  let refused = 0;
  const deadline = Date.now() + seconds * 1000;
  const worker = async () => {
    while (Date.now() < deadline) {
      const walletId = pick();
      const result = await store.debit({
        walletId,
        amountMicros: 1_000_000n,
        month,
        usage: {
          requestId: `bench_${done}`,
          keyId: null,
          accountId: null,
          walletId,
          dataset: 'system/api-usage',
          channel: 'rest',
          listCostMicros: 1_000_000n,
          costMicros: 1_000_000n,
          burnedMicros: 1_000_000n,
          outcome: 'charged',
          rows: 1,
          at: Date.now(),
        },
      });
      if (result.ok) done++;
      else refused++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const rate = done / ((performance.now() - started) / 1000);
  console.log(
    `${label.padEnd(40)} ${rate.toFixed(0).padStart(7)} debits/s  (${done} committed, ${refused} refused)`,
  );
  return rate;
}

console.log(`ledger debits on PostgreSQL, ${concurrency} concurrent callers, ${seconds} s each, one process`);
const spread = await run(
  `(i) spread over ${walletCount} wallets`,
  () => wallets[Math.floor(Math.random() * walletCount)] as string,
);
const hot = await run('(ii) one hot wallet', () => wallets[0] as string);
const audit = await store.auditLedger();
console.log(`ledger audit: ${audit.entries} entries, ${audit.mismatches.length} mismatches`);
console.log(
  `targets: spread >= 5000/s ${spread >= 5000 ? 'met' : 'NOT met'}; hot >= 1500/s ${hot >= 1500 ? 'met' : 'NOT met'}`,
);
await store.close();
await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
await admin.end();
