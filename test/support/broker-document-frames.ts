/**
 * The nodescaler SSM document as the broker emulator (broker-emulator.ts)
 * runs it: its parameters and script as packaged, and how its script frames
 * the tools' output (test/unit/broker-document.test.ts checks the framing
 * against the script itself, run with bash).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const ROOT = join(import.meta.dirname, '../..');

export interface DocumentParameter {
  type: string;
  default?: string;
  allowedPattern?: string;
  allowedValues?: string[];
}

/** The nodescaler document as packaged: its parameters and its script. */
export function brokerDocument(): { parameters: Record<string, DocumentParameter>; runCommand: string[] } {
  const template = parse(readFileSync(join(ROOT, 'infra/broker-document.yml'), 'utf8'), { customTags: [] }) as {
    Resources: { BrokerAdminDocument: { Properties: { Content: { parameters: Record<string, DocumentParameter>; mainSteps: Array<{ inputs: { runCommand: string[] } }> } } } };
  };
  const content = template.Resources.BrokerAdminDocument.Properties.Content;
  return { parameters: content.parameters, runCommand: content.mainSteps[0]!.inputs.runCommand };
}

/** What the document's script prints for a district action: the tool's lines without its district dump, then the exit code. */
export function frameDistrictOutput(raw: { stdout: string; exitCode: number }): { stdout: string; exitCode: number } {
  const kept = raw.stdout.replace(/\n$/, '').split('\n').filter((line) => !/^[\s]*([{["]|$)/.test(line));
  return { stdout: `${kept.map((l) => `${l}\n`).join('')}EXIT\t${raw.exitCode}\n`, exitCode: raw.exitCode };
}

/**
 * What the document's script prints for a move: the last JSON line, or with none, the first line of an uncaught
 * Ruby exception (`file:line:in 'method': message (Class)`, which a backtrace's tail leaves out) and the last 4
 * lines; then the exit code.
 */
export function frameMoveOutput(raw: { stdout: string; exitCode: number }): { stdout: string; exitCode: number } {
  const lines = raw.stdout.replace(/\n$/, '').split('\n');
  const report = lines.filter((l) => l.startsWith('{')).pop();
  const raised = lines.find((l) => /\([A-Z][A-Za-z:]*\)$/.test(l));
  const shown = report !== undefined ? report.slice(0, 20_000) : [...(raised !== undefined ? [raised] : []), ...lines.slice(-4)].map((l) => l.slice(0, 300)).join('\n');
  return { stdout: `${shown}\nEXIT\t${raw.exitCode}\n`, exitCode: raw.exitCode };
}

