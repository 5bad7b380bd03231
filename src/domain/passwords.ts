/**
 * Password hashing with argon2id (OWASP's first choice), at OWASP's parameters: 19 MiB, 2 passes, 1
 * lane. Hashes made by earlier versions (scrypt, parameters stored with each) still verify, and
 * `needsRehash` tells the login to replace them while it holds the password.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import argon2 from 'argon2';

const ARGON2 = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

const normalize = (password: string) => password.normalize('NFKC');

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(normalize(password), ARGON2);
}

function scryptKey(password: string, salt: Buffer, n: number, r: number, p: number, length: number) {
  return new Promise<Buffer>((resolve, reject) => {
    // maxmem above 128 * N * r, so any parameters a stored hash names can be derived.
    scrypt(
      normalize(password),
      salt,
      length,
      { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 },
      (error, key) => (error ? reject(error) : resolve(key)),
    );
  });
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  if (stored.startsWith('$argon2')) {
    try {
      return await argon2.verify(stored, normalize(password));
    } catch {
      return false; // a malformed stored hash matches nothing
    }
  }
  // scrypt$N$r$p$salt$key, as hashed before argon2id.
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scryptKey(
    password,
    Buffer.from(salt, 'base64url'),
    Number(n),
    Number(r),
    Number(p),
    expected.length,
  );
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Whether a stored hash is of an older scheme or weaker parameters: the next login replaces it. */
export function needsRehash(stored: string): boolean {
  if (!stored.startsWith('$argon2id$')) return true;
  try {
    return argon2.needsRehash(stored, ARGON2);
  } catch {
    return true;
  }
}

/** A hash to verify against when the account does not exist, so timing does not reveal which emails exist. */
export const decoyHash = await hashPassword(randomBytes(16).toString('hex'));
