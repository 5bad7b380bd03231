/** An OAuth connection and a pending sign-in, as the account holder sees them. */
import { z } from 'zod';
import type { ConnectionView, PendingConsent } from '../domain/connections.ts';
import { iso } from './common.ts';
import { keyOut, presentKey } from './keys.ts';

export const pendingConsentOut = z.object({
  client_id: z.string(),
  client_name: z.string(),
  redirect_uri: z.string(),
  redirect_host: z.string().describe('Where the client is sent back: check it is the client you meant.'),
  scopes: z.array(z.string()),
  resource: z.string(),
  expires_at: z.string(),
});

export function presentPendingConsent(consent: PendingConsent): z.infer<typeof pendingConsentOut> {
  return {
    client_id: consent.clientId,
    client_name: consent.clientName,
    redirect_uri: consent.redirectUri,
    redirect_host: new URL(consent.redirectUri).host,
    scopes: consent.scopes,
    resource: consent.resource,
    expires_at: iso(consent.expiresAt) as string,
  };
}

export const connectionOut = z.object({
  client_id: z.string(),
  client_name: z.string(),
  redirect_host: z.string(),
  connected_at: z.string(),
  key: keyOut.describe('The key the connection reads as: its caps, status, and the id to revoke it by.'),
});

export function presentConnection(view: ConnectionView, now: number): z.infer<typeof connectionOut> {
  return {
    client_id: view.connection.clientId,
    client_name: view.connection.clientName,
    redirect_host: view.connection.redirectHost,
    connected_at: iso(view.connection.createdAt) as string,
    key: presentKey(view.key, now),
  };
}
