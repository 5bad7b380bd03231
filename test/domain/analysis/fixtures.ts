/** Analyses the Workbench's unit tests run: two and three stock closes, each series one 2-token read. */
import type { AnalysisSpec } from '../../../src/domain/analysis/spec.ts';

const close = (symbol: string) => ({
  id: symbol.toLowerCase(),
  dataset: 'stocks/prices',
  entity: { symbol },
  field: 'close',
});

export const compare: AnalysisSpec = {
  series: [close('AAPL'), close('MSFT')],
  steps: [],
  outputs: [{ kind: 'line', values: ['aapl', 'msft'] }],
};

export const three: AnalysisSpec = {
  series: [close('AAPL'), close('MSFT'), close('NVDA')],
  steps: [],
  outputs: [{ kind: 'line', values: ['aapl', 'msft', 'nvda'] }],
};
