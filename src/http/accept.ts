/**
 * Accept on metered routes: a read the client says it cannot take is refused with 406 before it is
 * charged, rather than charged and answered in a type it did not ask for. No Accept admits everything.
 */
import { AppError } from '../errors.ts';

/** Whether the Accept header admits `type` (a full `type/subtype`): by name, by its type's range or by the any range, with q > 0. */
export function admits(accept: string | undefined, type: string): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  const [main] = type.split('/');
  for (const part of accept.split(',')) {
    const [range = '', ...params] = part.split(';');
    const name = range.trim().toLowerCase();
    const q = params.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/i.exec(p)).find((m) => m !== null);
    if (q && !(Number(q[1]) > 0)) continue;
    if (name === '*/*' || name === type || name === `${main}/*`) return true;
  }
  return false;
}

/** Refuses with 406 unless Accept admits one of `offered`. */
export function assertAcceptable(accept: string | undefined, offered: readonly string[]): void {
  if (offered.some((type) => admits(accept, type))) return;
  throw new AppError(
    'not_acceptable',
    `This endpoint answers ${offered.join(' or ')}, and the Accept header admits neither; nothing was charged.`,
    { available: offered },
  );
}
