/**
 * The README's `console` examples, run exactly as written: each `$` line as a
 * shell command, in order, in a copy of the repository (so `.nodescaler/` is
 * the copy's, as in a fresh clone), at 100 columns. A command exits 0 unless
 * an output line ends with `# exit N`; every output line shown (but `…`
 * lines) appears in what the command printed, up to the decision ids and the
 * seconds that differ from run to run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

interface Step {
  command: string;
  expected: string[];
  exit: number;
}

/** Every ```console block of the README, as its steps. */
export function readmeExamples(markdown: string): Step[][] {
  const blocks = [...markdown.matchAll(/```console\n([\s\S]*?)```/g)].map((m) => m[1]!);
  return blocks.map((block) => {
    const steps: Step[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('$ ')) {
        steps.push({ command: line.slice(2), expected: [], exit: 0 });
        continue;
      }
      const step = steps.at(-1);
      if (!step || line.trim() === '') continue;
      const exit = /\s+# exit (\d)$/.exec(line);
      if (exit) step.exit = Number(exit[1]);
      const text = exit ? line.slice(0, exit.index) : line;
      if (!text.includes('…')) step.expected.push(text);
    }
    return steps;
  });
}

/** What differs from one run to the next: decision ids (time in ms, a random suffix) and elapsed seconds. */
function normalize(text: string): string {
  return text
    .replace(/\b(up|down):([a-z0-9_]+):\d{13}\b/g, '$1:$2:<ms>')
    .replace(/manual:(\d{8}T\d{6}Z):[0-9a-f]{8}/g, 'manual:$1:<id>')
    .replace(/\b(\d+m)?\d+s\b/g, '<d>')
    .replace(/\s+/g, ' ')
    .trim();
}

function sh(command: string, cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn('bash', ['-c', command], {
      cwd,
      env: { ...process.env, COLUMNS: '100', NO_COLOR: '1', npm_config_loglevel: 'error', SLS_TELEMETRY_DISABLED: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolveRun({ code, out }));
  });
}

/** A copy of the repository's tracked files (its own `.nodescaler/`), sharing node_modules. */
function cloneWorkspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'nodescaler-readme-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT }).toString('utf8').split('\0').filter(Boolean);
  execFileSync('tar', ['-cf', join(dir, 'repo.tar'), '--null', '-T', '-'], { cwd: ROOT, input: files.join('\0') });
  const work = join(dir, 'repo');
  execFileSync('mkdir', [work]);
  execFileSync('tar', ['-xf', join(dir, 'repo.tar'), '-C', work]);
  symlinkSync(join(ROOT, 'node_modules'), join(work, 'node_modules'));
  return work;
}

const workspaces: string[] = [];
afterAll(() => {
  for (const dir of workspaces) rmSync(resolve(dir, '..'), { recursive: true, force: true });
});

const examples = readmeExamples(readFileSync(join(ROOT, 'README.md'), 'utf8'));

describe('README examples', () => {
  it('has console examples to run', () => {
    expect(examples.length).toBeGreaterThanOrEqual(2);
    expect(examples.flat().some((step) => step.command.startsWith('npm run invoke -- nodeProvisioner .nodescaler/queues/scale.json'))).toBe(true);
  });

  examples.forEach((steps, index) => {
    it(`console example ${index + 1} (${steps[0]!.command.slice(0, 60)}…) works as written`, async () => {
      const work = cloneWorkspace();
      workspaces.push(work);
      for (const step of steps) {
        const ran = await sh(step.command, work);
        expect(ran.code, `$ ${step.command}\n${ran.out}`).toBe(step.exit);
        const printed = normalize(ran.out);
        for (const line of step.expected) expect(printed, `$ ${step.command}: missing line\n${line}\nin\n${ran.out}`).toContain(normalize(line));
      }
    });
  });
});
