/**
 * What each kind of credential may do, in one table (spec 5, DECISIONS "Credentials", "Limits"): the
 * rules read their row rather than branching on the kind. Adding a kind is one row here plus its
 * issuance (and, for a stored key kind, its key prefix and the keys table's CHECK constraint).
 */

/** Who can call: the three kinds of stored keys, and a login session. */
export type CredentialKind = 'sandbox' | 'public_test' | 'live' | 'session';

export interface KindPolicy {
  /** How refusals name it: "A sandbox key reads only P0 datasets". */
  label: string;
  /** Reads only P0 datasets (the free domains); anything else is 402 not_entitled. */
  p0Only: boolean;
  /** Its reads are priced but burn nothing (notional): the public test's free reads. */
  notional: boolean;
  /** Priced at the first tier whatever it burned, and shown no next tier. */
  baseTierOnly: boolean;
  /** Which limits of config.limits apply; `wallet` is the tier's (or package's) rate. */
  limits: 'sandbox' | 'public_test' | 'wallet';
  /** Anonymous-like: counted against its client IP's fence as well. */
  ipFence: boolean;
  /** Limits are counted per account (every key of it together) rather than per key. */
  limitedPerAccount: boolean;
  /** May start a bulk export (its package must bring bulk_export too). */
  mayExport: boolean;
  /** An early_bird account's read its wallet cannot cover is served at zero burn. */
  grandfathered: boolean;
  /** May manage the account's keys and end its session (the session-only routes). */
  managesAccount: boolean;
}

export const credentialKinds: Readonly<Record<CredentialKind, KindPolicy>> = {
  sandbox: {
    label: 'a sandbox key',
    p0Only: true,
    notional: false,
    baseTierOnly: true,
    limits: 'sandbox',
    ipFence: true,
    limitedPerAccount: false,
    mayExport: false,
    grandfathered: false,
    managesAccount: false,
  },
  public_test: {
    label: 'a public-test key',
    p0Only: true,
    notional: true,
    baseTierOnly: false,
    limits: 'public_test',
    ipFence: false,
    limitedPerAccount: true,
    mayExport: false,
    grandfathered: false,
    managesAccount: false,
  },
  live: {
    label: 'a wallet key',
    p0Only: false,
    notional: false,
    baseTierOnly: false,
    limits: 'wallet',
    ipFence: false,
    limitedPerAccount: false,
    mayExport: true,
    grandfathered: false,
    managesAccount: false,
  },
  session: {
    label: 'a session',
    p0Only: false,
    notional: false,
    baseTierOnly: false,
    limits: 'wallet',
    ipFence: false,
    limitedPerAccount: true,
    mayExport: true,
    grandfathered: true,
    managesAccount: true,
  },
};

/** The kinds whose row has `flag` set: for route configs such as the session-only routes' `allow`. */
export const kindsWhere = (flag: keyof KindPolicy): CredentialKind[] =>
  (Object.keys(credentialKinds) as CredentialKind[]).filter((kind) => credentialKinds[kind][flag] === true);

/** "A sandbox key" at the start of a sentence. */
export const kindLabel = (kind: CredentialKind, capital = false): string => {
  const label = credentialKinds[kind].label;
  return capital ? label[0]?.toUpperCase() + label.slice(1) : label;
};
