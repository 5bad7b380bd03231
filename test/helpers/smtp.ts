/**
 * A real SMTP server on a loopback port that keeps every message it is sent, for the tests of mail the
 * service sends (password reset). Plain SMTP without AUTH or STARTTLS, as a local relay would be.
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface CapturedMail {
  from: string;
  to: string[];
  /** The message as sent: headers and body, transfer-encoded. */
  raw: string;
  /** The decoded text body. */
  text: string;
  subject: string;
}

export interface TestSmtp {
  url: string;
  mails: CapturedMail[];
  /** The next message to arrive (or the oldest not yet taken); fails after `timeoutMs`. */
  next(timeoutMs?: number): Promise<CapturedMail>;
  close(): Promise<void>;
}

/** Quoted-printable (RFC 2045) to text: soft line breaks removed, =XX escapes decoded as UTF-8. */
function decodeQuotedPrintable(body: string): string {
  const joined = body.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < joined.length; i++) {
    const hex = joined.slice(i + 1, i + 3);
    if (joined[i] === '=' && /^[0-9A-F]{2}$/i.test(hex)) {
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(...Buffer.from(joined[i] as string, 'utf8'));
  }
  return Buffer.from(bytes).toString('utf8');
}

function parse(raw: string, from: string, to: string[]): CapturedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const body = raw.slice(split + 4);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const encoding = header('Content-Transfer-Encoding').toLowerCase();
  const text =
    encoding === 'quoted-printable'
      ? decodeQuotedPrintable(body)
      : encoding === 'base64'
        ? Buffer.from(body, 'base64').toString('utf8')
        : body;
  return { from, to, raw, text: text.replace(/\r\n/g, '\n'), subject: header('Subject') };
}

export async function startSmtp(): Promise<TestSmtp> {
  const mails: CapturedMail[] = [];
  let taken = 0;
  const waiting: (() => void)[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const to = session.envelope.rcptTo.map((r) => r.address);
        mails.push(parse(Buffer.concat(chunks).toString('utf8'), from, to));
        for (const wake of waiting.splice(0)) wake();
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    async next(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (mails.length <= taken) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no mail arrived within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiting.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return mails[taken++] as CapturedMail;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The password-reset link a mail carries. */
export function resetLinkOf(mail: CapturedMail): URL {
  const found = /https?:\/\/\S+\/terminal\/reset-password\?token=[A-Za-z0-9_-]+/.exec(mail.text);
  if (!found) throw new Error(`no reset link in the mail:\n${mail.text}`);
  return new URL(found[0]);
}
