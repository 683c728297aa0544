/**
 * Tells an operator something needs a person (capacity exhausted, a refused
 * decommission): SNS with an e-mail subscription when deployed. Errors:
 * `TransientError`; callers log a failure and carry on, a notice never
 * blocks the action it reports.
 */
export interface Notifier {
  /** `subject` is one short line (at most 100 characters); `message` is plain text. `dedupKey` makes a retry harmless where the channel supports it. */
  notify(notice: { subject: string; message: string; pool?: string; dedupKey?: string }): Promise<void>;
}
