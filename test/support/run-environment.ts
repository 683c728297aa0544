/**
 * vitest globalSetup: one environment for the whole run, inherited by every
 * worker and every process a test starts.
 *
 * - Temporary folders: TMPDIR points at one folder per run, removed when the
 *   run ends, so a test that forgets its mkdtemp (or a child process that
 *   writes its own) leaves nothing behind in the machine's /tmp.
 * - The AWS SDK's NodeVersionSupportWarning (Node < 22) is printed here once;
 *   every worker and child process would otherwise print it again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SDK_WARNING = 'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED';

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'nodescaler-vitest-'));
  const previous = { TMPDIR: process.env.TMPDIR, [SDK_WARNING]: process.env[SDK_WARNING] };
  process.env.TMPDIR = root;
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 22 && process.env[SDK_WARNING] !== 'true') {
    console.warn(
      `NodeVersionSupportWarning (shown once for this run): the AWS SDK for JavaScript (v3) published after the first week of January 2027 will require Node >= 22; this is Node ${process.versions.node}.`,
    );
    process.env[SDK_WARNING] = 'true';
  }
  return () => {
    for (const [key, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    rmSync(root, { recursive: true, force: true });
  };
}
