/** Recipes: fixed multi-step reads with a documented answer, charged once as the sum of their reads. */
import type { CatalogEntry } from '../catalog/catalog.ts';
import { AppError } from '../errors.ts';
import type { Caller } from './caller.ts';
import { type Estimate, estimate, type MeterDeps, type Metered, meter } from './metering.ts';
import { type DataReads, parseRow } from './reads.ts';

export const DOW30 = [
  'AAPL',
  'AMGN',
  'AMZN',
  'AXP',
  'BA',
  'CAT',
  'CRM',
  'CSCO',
  'CVX',
  'DIS',
  'GS',
  'HD',
  'HON',
  'IBM',
  'JNJ',
  'JPM',
  'KO',
  'MCD',
  'MMM',
  'MRK',
  'MSFT',
  'NKE',
  'NVDA',
  'PG',
  'SHW',
  'TRV',
  'UNH',
  'V',
  'VZ',
  'WMT',
] as const;

export interface RecipeInfo {
  name: string;
  path: string;
  title: string;
  description: string;
  reads: string[];
  parameters: { name: string; description: string; default: string | null }[];
}

export const recipeDatasets = { dow30: 'equities/stock-prices', calendar: 'calendar/events' } as const;

export const recipes: readonly RecipeInfo[] = [
  {
    name: 'dow30-sandbox-smoke',
    path: '/api/v1/recipes/dow30-sandbox-smoke',
    title: 'Dow 30: latest close and change',
    description:
      'The latest close of each Dow Jones Industrial Average constituent, with the change from the previous close.',
    reads: [recipeDatasets.dow30],
    parameters: [],
  },
  {
    name: 'calendar-tonight',
    path: '/api/v1/recipes/calendar-tonight',
    title: 'Economic calendar: tonight',
    description: 'Economic calendar events from now until 06:00 the next morning in the given time zone.',
    reads: [recipeDatasets.calendar],
    parameters: [{ name: 'tz', description: 'IANA time zone', default: 'America/New_York' }],
  },
];

function zonedParts(atMs: number, timeZone: string) {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(atMs));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  return {
    year: get('year'),
    month: get('month'),
    day: get('day'),
    hour: get('hour'),
    minute: get('minute'),
    second: get('second'),
  };
}

/** The UTC instant of a wall-clock time in a zone (two passes settle DST offsets). */
function zonedToUtc(year: number, month: number, day: number, hour: number, timeZone: string): number {
  let guess = Date.UTC(year, month - 1, day, hour);
  for (let i = 0; i < 2; i++) {
    const p = zonedParts(guess, timeZone);
    const asIfUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
    guess += Date.UTC(year, month - 1, day, hour) - asIfUtc;
  }
  return guess;
}

export function validTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** From now until the next 06:00 in the zone (today's if it is before 06:00, else tomorrow's). */
export function tonightWindow(nowMs: number, timeZone: string): { from: number; until: number } {
  const local = zonedParts(nowMs, timeZone);
  const base = new Date(Date.UTC(local.year, local.month - 1, local.day + (local.hour < 6 ? 0 : 1)));
  return {
    from: nowMs,
    until: zonedToUtc(base.getUTCFullYear(), base.getUTCMonth() + 1, base.getUTCDate(), 6, timeZone),
  };
}

const isoSeconds = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

export class Recipes {
  readonly #reads: DataReads;
  readonly #meter: MeterDeps;

  constructor(reads: DataReads, meter: MeterDeps) {
    this.#reads = reads;
    this.#meter = meter;
  }

  info(name: string): RecipeInfo {
    const recipe = recipes.find((r) => r.name === name);
    if (!recipe) {
      throw new AppError(
        'recipe_not_found',
        `No recipe "${name}". Known: ${recipes.map((r) => r.name).join(', ')}.`,
      );
    }
    return recipe;
  }

  #entries(recipe: RecipeInfo): CatalogEntry[] {
    return recipe.reads.map((key) => this.#reads.resolve(key));
  }

  /** List cost of one run: the sum of its reads' list costs. */
  listCost(name: string): number {
    return this.#entries(this.info(name)).reduce((sum, e) => sum + e.listCost, 0);
  }

  /** What one run would cost the caller now, and whether it would be refused. */
  async estimate(caller: Caller, name: string): Promise<Estimate> {
    const items = this.#entries(this.info(name)).map((e) => ({
      label: e.key,
      listCost: e.listCost,
      p0: e.p0,
    }));
    return estimate(this.#meter, caller, `recipe:${name}`, items);
  }

  async run(
    caller: Caller,
    requestId: string,
    name: string,
    params: { tz?: string | undefined },
  ): Promise<Metered<{ recipe: string; count: number }>> {
    const recipe = this.info(name);
    // A parameter the recipe does not take is a mistake to report, not to charge a read for.
    for (const [given, value] of Object.entries(params)) {
      if (value !== undefined && !recipe.parameters.some((p) => p.name === given)) {
        const takes = recipe.parameters.map((p) => p.name).join(', ') || 'none';
        throw new AppError(
          'invalid_request',
          `The recipe ${recipe.name} takes no parameter "${given}" (it takes: ${takes}).`,
          {
            errors: [{ path: given, message: 'not a parameter of this recipe' }],
          },
        );
      }
    }
    const entries = this.#entries(recipe);
    const items = entries.map((e) => ({ label: e.key, listCost: e.listCost, p0: e.p0 }));
    const deps = this.#meter;
    if (name === 'calendar-tonight') {
      const tz = params.tz ?? 'America/New_York';
      if (!validTimeZone(tz)) {
        throw new AppError('invalid_request', `"${tz}" is not an IANA time zone.`, {
          errors: [{ path: 'tz', message: 'unknown time zone' }],
        });
      }
      const window = tonightWindow(deps.now(), tz);
      return meter(deps, caller, requestId, `recipe:${name}`, items, async () => {
        const page = await this.#reads.fetchRows(entries[0] as CatalogEntry, {
          filters: {},
          from: isoSeconds(window.from),
          to: isoSeconds(window.until),
          limit: 1000,
          sort: 'asc',
        });
        const events = page.rows.map(parseRow);
        const value = {
          recipe: name,
          tz,
          from: new Date(window.from).toISOString(),
          until: new Date(window.until).toISOString(),
          count: events.length,
          sample: page.source === 'sample',
          events,
        };
        return { value, rows: events.length };
      });
    }
    return meter(deps, caller, requestId, `recipe:${name}`, items, async () => {
      const page = await this.#reads.fetchRows(entries[0] as CatalogEntry, {
        filters: { symbol: [...DOW30] },
        limit: 1000,
        sort: 'desc',
      });
      const bySymbol = new Map<string, ReturnType<typeof parseRow>[]>();
      for (const row of page.rows.map(parseRow)) {
        const list = bySymbol.get(String(row.symbol)) ?? [];
        if (list.length < 2) list.push(row);
        bySymbol.set(String(row.symbol), list);
      }
      const constituents = DOW30.map((symbol) => {
        const [latest, previous] = bySymbol.get(symbol) ?? [];
        const close = typeof latest?.close === 'number' ? latest.close : null;
        const prior = typeof previous?.close === 'number' ? previous.close : null;
        const change = close !== null && prior !== null ? Math.round((close - prior) * 100) / 100 : null;
        return {
          symbol,
          date: latest ? String(latest.date ?? latest[entries[0]?.dataset.time_field ?? 'date']) : null,
          close,
          previous_close: prior,
          change,
          change_pct: change !== null && prior ? Math.round((change / prior) * 10000) / 100 : null,
        };
      });
      const value = {
        recipe: name,
        count: constituents.length,
        sample: page.source === 'sample',
        constituents,
      };
      return { value, rows: constituents.length };
    });
  }
}
