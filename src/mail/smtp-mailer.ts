/**
 * The Mailer port over SMTP (nodemailer): SMTP_URL names the server (smtp:// upgrades with STARTTLS when
 * the server offers it, smtps:// is TLS from the start), MAIL_FROM the sender.
 */
import { createTransport } from 'nodemailer';
import type { Mailer, MailMessage } from '../domain/mail.ts';

export class SmtpMailer implements Mailer {
  readonly #transport: ReturnType<typeof createTransport>;
  readonly #from: string;

  constructor(options: { url: string; from: string; timeoutMs?: number }) {
    const timeoutMs = options.timeoutMs ?? 30_000;
    // A server that stops answering holds no mail, nor a socket, for long.
    this.#transport = createTransport({
      url: options.url,
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    });
    this.#from = options.from;
  }

  async send(message: MailMessage): Promise<void> {
    await this.#transport.sendMail({
      from: this.#from,
      to: message.to,
      subject: message.subject,
      text: message.text,
    });
  }

  close(): void {
    this.#transport.close();
  }
}
