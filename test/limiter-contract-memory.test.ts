/** The Limiter contract against the in-process default: MemoryLimiter. */
import { MemoryLimiter } from '../src/limits/memory-limiter.ts';
import { runLimiterContract } from './contracts/limiter-contract.ts';

runLimiterContract('MemoryLimiter', async () => new MemoryLimiter());
