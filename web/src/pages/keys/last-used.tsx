import { when } from './when.ts';

/** When a key last read, among the recent usage events; "not recently" when none names it. */
export function LastUsed({ at }: { at: string | undefined }) {
  return at !== undefined ? when(at) : <span class="muted">not recently</span>;
}
