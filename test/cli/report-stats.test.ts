/**
 * `nodescaler report-stats` as a process against a local embedded state: one
 * node-stats per known node appended to the state's stats queue file, a node
 * the platform does not know skipped with one warning, exit 0.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMessage } from '../../lib/messages/index.js';
import { CliWorld, NODES, runCli } from '../support/cli-world.js';

const START = '2026-11-21T10:00:00.000Z';
let dir: string;
let world: CliWorld;

function statsQueue(): SQSEvent['Records'] {
  try {
    return (JSON.parse(readFileSync(join(dir, 'queues/stats.json'), 'utf8')) as SQSEvent).Records;
  } catch {
    return [];
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'nodescaler-report-stats-'));
  world = new CliWorld(dir, START);
  await world.reportUntil('2026-11-21T10:00:30.000Z');
  // A node being provisioned: in the table, not yet on the platform.
  await world.withState((state) =>
    state.ports.store.createNode(
      { nodeId: 'd1-small-5.example.com', pool: 'd1/small', district: 'd1', profile: 'small', state: 'provisioning', createdAt: world.at, origin: 'provisioned', protected: false },
      new Date(world.at),
    ),
  );
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('nodescaler report-stats against the local embedded state', () => {
  it('sends one node-stats per node of every pool to the stats queue file; the unknown node gets a warning', async () => {
    const before = statsQueue().length;
    const result = await runCli(['report-stats', '--state-dir', dir, '--config', world.configFile, '--at', world.at]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('nodescaler: warning: d1-small-5.example.com: no stats sent: the platform does not know this node\n');
    expect(result.stdout).toContain(`5 node-stats sent to ${join(dir, 'queues/stats.json')}; 1 node(s) skipped (warnings above)`);

    const records = statsQueue().slice(before);
    const messages = records.map((record) => {
      const parsed = parseMessage(record.body);
      if (!parsed.ok) throw parsed.error;
      return parsed.message;
    });
    // The CLI's clock starts at --at and runs on: one reportedAt for the whole run, just after it.
    const reportedAt = messages[0]!.type === 'node-stats' ? messages[0]!.reportedAt : '';
    expect(Date.parse(reportedAt) - Date.parse(world.at)).toBeGreaterThanOrEqual(0);
    expect(Date.parse(reportedAt) - Date.parse(world.at)).toBeLessThan(20_000);
    const expected = [...NODES]
      .sort((a, b) => (a.profile === b.profile ? a.nodeId.localeCompare(b.nodeId) : a.profile === 'small' ? -1 : 1))
      .map((node) => ({
        type: 'node-stats',
        v: 1,
        nodeId: node.nodeId,
        district: node.district,
        profile: node.profile,
        activeGears: node.gears,
        maxActiveGears: node.max,
        reportedAt,
      }));
    expect(messages).toStrictEqual(expected);
  });

  it('--pool reports one pool; --json gives the sent messages', async () => {
    const before = statsQueue().length;
    const result = await runCli(['report-stats', '--pool', 'd1/medium', '--json', '--state-dir', dir, '--config', world.configFile, '--at', world.at]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const view = JSON.parse(result.stdout) as { sent: Array<{ nodeId: string; activeGears: number }>; skipped: unknown[] };
    expect(view.sent.map((m) => [m.nodeId, m.activeGears])).toStrictEqual([['d1-medium-1.example.com', 20]]);
    expect(view.skipped).toStrictEqual([]);
    expect(statsQueue().length).toBe(before + 1);
  });

  it('an unconfigured --pool is exit 2 and sends nothing', async () => {
    const before = statsQueue().length;
    const result = await runCli(['report-stats', '--pool', 'd9/none', '--state-dir', dir, '--config', world.configFile, '--at', world.at]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('not a configured pool');
    expect(statsQueue().length).toBe(before);
  });
});
