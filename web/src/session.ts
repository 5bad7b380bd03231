/** Who is signed in and their balance, shared by the header bar and the pages. */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from './api.ts';
import type { Me } from './types.ts';

export interface SessionState {
  /** undefined: not known yet; null: signed out. */
  me: Me | null | undefined;
  balance: string | null;
}

let state: SessionState = { me: undefined, balance: null };
const listeners = new Set<(s: SessionState) => void>();

function set(next: Partial<SessionState>): void {
  state = { ...state, ...next };
  for (const listener of listeners) listener(state);
}

export function useSession(): SessionState {
  const [s, setS] = useState(state);
  useEffect(() => {
    listeners.add(setS);
    setS(state);
    return () => {
      listeners.delete(setS);
    };
  }, []);
  return s;
}

/** Reads GET /api/v1/me again (after sign-in, after a read, on the wallet page). */
export async function refreshMe(): Promise<Me | null> {
  try {
    // Asked first, so that a signed-out visitor's page load answers 200, not a 401 in the console.
    const { body: session } = await api<{ signed_in: boolean }>('/api/v1/auth/session', {
      signInOn401: false,
    });
    if (!session.signed_in) {
      set({ me: null, balance: null });
      return null;
    }
    const { body } = await api<Me>('/api/v1/me', { signInOn401: false });
    set({ me: body, balance: body.wallet.balance });
    return body;
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      set({ me: null, balance: null });
      return null;
    }
    throw error;
  }
}

export function setBalance(balance: string): void {
  set({ balance });
}

export function signedOut(): void {
  set({ me: null, balance: null });
}
