/** Mail to an account's owner: the password-reset link. */

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Where mail goes (an SMTP server). `send` resolves once the server has accepted the message. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}
