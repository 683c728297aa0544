/**
 * The SSM document's script (infra/broker-document.yml), run with bash
 * against stand-ins for the broker's tools that print what the emulator's
 * tools print: its framing must be the one the emulator gives the adapter.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BrokerEmulator, brokerDocument, frameDistrictOutput, frameMoveOutput, LOCK_UNAVAILABLE_OUTPUT } from '../support/broker-emulator.js';

const dir = mkdtempSync(join(tmpdir(), 'broker-document-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
for (const tool of ['oo-admin-ctl-district', 'oo-admin-move']) {
  writeFileSync(join(dir, tool), `#!/bin/bash\necho "$*" > "${dir}/${tool}.args"\ncat "${dir}/out"\nexit "$(cat "${dir}/rc")"\n`);
  chmodSync(join(dir, tool), 0o755);
}

/** The document run as SSM runs it: parameters substituted (defaults for the rest), the lines one bash script. */
function runDocument(parameters: Record<string, string>, raw: { stdout: string; exitCode: number }) {
  writeFileSync(join(dir, 'out'), raw.stdout);
  writeFileSync(join(dir, 'rc'), String(raw.exitCode));
  const document = brokerDocument();
  const values = Object.fromEntries(Object.entries(document.parameters).map(([name, p]) => [name, parameters[name] ?? p.default ?? '']));
  const script = document.runCommand.join('\n').replace(/\{\{ (\w+) \}\}/g, (_, name: string) => values[name]!);
  const ran = spawnSync('bash', ['-c', script], { env: { PATH: `${dir}:${process.env.PATH}` }, encoding: 'utf8' });
  return { stdout: ran.stdout, exitCode: ran.status };
}

const clock = { now: () => new Date('2026-11-24T01:00:00Z') };
function world() {
  const broker = new BrokerEmulator({ clock, brokerInstanceId: 'i-1', documentName: 'doc' });
  broker.createDistrict('d1', 'small');
  for (let i = 0; i < 40; i++) {
    broker.addNodeHost(`n${i}.example.com`, 'small', 10);
    broker.joinDistrict('d1', `n${i}.example.com`);
  }
  broker.addNodeHost('new.example.com', 'small', 10);
  return broker;
}

describe('infra/broker-document.yml', () => {
  it.each([
    ['remove-node', 'new.example.com'],
    ['remove-node', 'n3.example.com'],
    ['deactivate-node', 'n3.example.com'],
    ['add-node', 'new.example.com'],
  ])('%s %s: the script prints what the emulator frames (the tool lines without the dump, then EXIT)', (action, node) => {
    const raw = world().ctlDistrict(action, 'd1', node);
    expect(raw.stdout).toContain('"servers"=>');
    const ran = runDocument({ action, node, district: 'd1' }, raw);
    expect(ran).toEqual(frameDistrictOutput(raw));
    expect(ran.stdout).not.toContain('servers');
  });

  it('runs the tool with the parameters as separate words', () => {
    runDocument({ action: 'remove-node', node: 'n3.example.com', district: 'd1' }, { stdout: '', exitCode: 0 });
    const args = spawnSync('cat', [join(dir, 'oo-admin-ctl-district.args')], { encoding: 'utf8' }).stdout;
    expect(args.trim()).toBe('-c remove-node -n d1 -i n3.example.com');
  });

  it.each([
    ['add-node', '-c add-node -n d1 -i n3.example.com -r east -z east-b'],
    ['set-region', '-c set-region -n d1 -i n3.example.com -r east -z east-b'],
  ])('runs %s with the region and zone as separate words; without them, none', (action, words) => {
    runDocument({ action, node: 'n3.example.com', district: 'd1', region: 'east', zone: 'east-b' }, { stdout: '', exitCode: 0 });
    expect(spawnSync('cat', [join(dir, 'oo-admin-ctl-district.args')], { encoding: 'utf8' }).stdout.trim()).toBe(words);
    runDocument({ action: 'add-node', node: 'n3.example.com', district: 'd1' }, { stdout: '', exitCode: 0 });
    expect(spawnSync('cat', [join(dir, 'oo-admin-ctl-district.args')], { encoding: 'utf8' }).stdout.trim()).toBe('-c add-node -n d1 -i n3.example.com');
  });

  it.each([
    ['a report', { stdout: 'Rails warning\n{"g1":{"result":false,"message":"Error moving gear."}}\n', exitCode: 1 }],
    ['a success', { stdout: '{"g1":{"result":true,"destination":"n2.example.com"}}\n', exitCode: 0 }],
    ['no report (a crash)', { stdout: Array.from({ length: 12 }, (_, i) => `backtrace line ${i}`).join('\n') + '\n', exitCode: 1 }],
    ['no report (an exception it does not rescue: the line that names it, then the tail)', { stdout: LOCK_UNAVAILABLE_OUTPUT, exitCode: 1 }],
  ])('move with %s: the script prints what the emulator frames', (_, raw) => {
    expect(runDocument({ action: 'move', node: 'n2.example.com', gear: 'g1' }, raw)).toEqual(frameMoveOutput(raw));
  });

  it("move ended by an exception: the exception's line comes first, so the adapter reads why", () => {
    const printed = runDocument({ action: 'move', node: 'n2.example.com', gear: 'g1' }, { stdout: LOCK_UNAVAILABLE_OUTPUT, exitCode: 1 }).stdout;
    expect(printed.split('\n')[0]).toMatch(/Another operation is already running\. \(OpenShift::LockUnavailableException\)$/);
    expect(printed.endsWith('EXIT\t1\n')).toBe(true);
  });
});
