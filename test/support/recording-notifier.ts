import type { Notifier } from '../../lib/ports/notifier.js';

export class RecordingNotifier implements Notifier {
  readonly notices: Array<{ subject: string; message: string; pool?: string; dedupKey?: string }> = [];

  async notify(notice: { subject: string; message: string; pool?: string; dedupKey?: string }): Promise<void> {
    this.notices.push(notice);
  }
}
