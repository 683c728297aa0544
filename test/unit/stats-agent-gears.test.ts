/**
 * What the node stats agent (infra/agent/nodescaler-agent.sh) reports about a
 * node's gears, from an OpenShift v2 gear tree: which active gears restart a
 * tenant when moved (head gears, unscaled apps), the gear list with the
 * operator's do-not-move marker, and the bounds that keep a message valid.
 * Run for real with `sh` (test/support/stats-agent-node.ts); what it sends
 * is parsed with the node-stats schema and fed to the domain's own rules.
 */
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { candidateRefusal, poolBudget } from '../../lib/domain/budget.js';
import { MAX_STORED_GEARS, statsToStore } from '../../lib/domain/node-stats.js';
import { moveCost } from '../../lib/domain/payoff.js';
import { MAX_BODY_BYTES, parseMessage } from '../../lib/messages/index.js';
import { config } from '../support/builders.js';
import { AGENT, gearId, useAgentNode } from '../support/stats-agent-node.js';

const MARKER = '.nodescaler-do-not-move';

describe('nodescaler-agent.sh: gear kinds, gear list, do-not-move', () => {
  const agent = useAgentNode();

  /** Runs the agent; the node-stats message it sent, parsed by the project's schema. */
  async function report() {
    const run = await agent.node.run();
    expect(run.code, run.stderr).toBe(0);
    const parsed = parseMessage(agent.node.sent(), { now: new Date() });
    if (!parsed.ok || parsed.message.type !== 'node-stats') throw new Error(`agent sent an invalid message: ${JSON.stringify(parsed)}`);
    return { message: parsed.message, stderr: run.stderr };
  }

  it('counts head gears and gears of unscaled apps as disruptive, secondary gears of scaled apps as siblings, and lists every gear', async () => {
    agent.node.appGear(1, 'blog', 'unscaled', 'started');
    agent.node.appGear(2, 'shop', 'head', 'started');
    agent.node.appGear(3, 'shop', 'secondary', 'started');
    agent.node.appGear(4, 'shop', 'secondary'); // no state file yet: active
    agent.node.appGear(5, 'shop', 'secondary', 'idle');
    agent.node.appGear(6, 'wiki', 'unscaled', 'stopped');
    const { message, stderr } = await report();
    expect(stderr).toBe('');
    expect(message).toMatchObject({ activeGears: 4, maxActiveGears: 100, disruptiveGears: 2 });
    expect(message.idleGears).toBeUndefined();
    // Idle and stopped gears are listed too, marked idle: a drain moves them (taking no slot on the target, as
    // max_active_gears counts only active gears), and the budget checks them. The active head gear and the unscaled
    // app's gear are marked: moving one restarts its tenant (TenantRestarts); a stopped one restarts nothing.
    expect(message.gears).toEqual([
      { uuid: gearId(1), app: 'blog', size: 'small', disruptive: true },
      { uuid: gearId(2), app: 'shop', size: 'small', disruptive: true },
      { uuid: gearId(3), app: 'shop', size: 'small' },
      { uuid: gearId(4), app: 'shop', size: 'small' },
      { uuid: gearId(5), app: 'shop', size: 'small', idle: true },
      { uuid: gearId(6), app: 'wiki', size: 'small', idle: true },
    ]);
    expect(message.gears!.filter((gear) => !gear.idle)).toHaveLength(message.activeGears);
    // The pays-off check now charges the node by kind, not every gear as disruptive.
    const weights = config().scaleDown.payoff.moveCost;
    expect(moveCost(statsToStore(message), weights)).toMatchObject({ idle: 0, sibling: 2, disruptive: 2 });
  });

  it('marks no stopped or idle gear disruptive, whatever gear came before it', async () => {
    agent.node.appGear(1, 'blog', 'unscaled', 'started');
    agent.node.appGear(2, 'wiki', 'unscaled', 'stopped');
    agent.node.appGear(3, 'shop', 'head', 'started');
    agent.node.appGear(4, 'shop', 'head', 'idle');
    const { message } = await report();
    expect(message.gears!.map((gear) => [gear.app, gear.disruptive ?? false])).toEqual([
      ['blog', true],
      ['wiki', false],
      ['shop', true],
      ['shop', false],
    ]);
  });

  it('counts a gear whose DNS facts are missing, empty or unreadable as disruptive (never a guessed sibling)', async () => {
    agent.node.gear(1, { state: 'started', app: 'a1' }); // no .env DNS at all
    agent.node.gear(2, { state: 'started', app: 'a2', appDns: 'a2-ns.example.com' }); // no gear DNS
    agent.node.gear(3, { state: 'started', app: 'a3', gearDns: '', appDns: 'a3-ns.example.com' });
    const home = agent.node.gear(4, { state: 'started', app: 'a4', appDns: 'a4-ns.example.com' });
    symlinkSync(join(home, '.env/OPENSHIFT_APP_NAME'), join(home, '.env/OPENSHIFT_GEAR_DNS')); // not a plain file
    agent.node.appGear(5, 'a5', 'secondary', 'started');
    const { message } = await report();
    expect(message).toMatchObject({ activeGears: 5, disruptiveGears: 4 });
    expect(message.gears!.map((gear) => gear.disruptive ?? false)).toEqual([true, true, true, true, false]);
  });

  it("marks a gear doNotMove when its directory holds the operator's marker file, and the budget then refuses its node", async () => {
    const pinned = agent.node.appGear(1, 'billing', 'secondary', 'started');
    writeFileSync(join(pinned, MARKER), '');
    const idle = agent.node.appGear(2, 'billing', 'secondary', 'idle');
    writeFileSync(join(idle, MARKER), 'ticket 1234\n');
    const linked = agent.node.appGear(3, 'shop', 'secondary', 'started');
    symlinkSync(join(pinned, MARKER), join(linked, MARKER)); // a link is not the operator's marker
    const dir = agent.node.appGear(4, 'shop', 'secondary', 'started');
    mkdirSync(join(dir, MARKER)); // nor is a directory
    const { message } = await report();
    expect(message.gears!.map((g) => [g.uuid, g.doNotMove ?? false])).toEqual([
      [gearId(1), true],
      [gearId(2), true],
      [gearId(3), false],
      [gearId(4), false],
    ]);
    const budget = poolBudget(config(), undefined);
    expect(candidateRefusal(budget, { stats: statsToStore(message) }, undefined, new Date())).toBe(`gear ${gearId(1)} (billing) is marked do-not-move`);
  });

  it('sends again when a gear is marked or changes kind, though the counts stay the same', async () => {
    const home = agent.node.appGear(1, 'shop', 'secondary', 'started');
    await report();
    await agent.node.run();
    expect(agent.node.calls()).toBe(1);
    writeFileSync(join(home, MARKER), '');
    expect((await report()).message.gears![0]!.doNotMove).toBe(true);
    expect(agent.node.calls()).toBe(2);
    writeFileSync(join(home, '.env/OPENSHIFT_GEAR_DNS'), 'shop-ns.example.com'); // now the head gear
    expect((await report()).message.disruptiveGears).toBe(1);
    expect(agent.node.calls()).toBe(3);
  });

  it.each([
    ['has no application name', (home: string) => rmSync(join(home, '.env/OPENSHIFT_APP_NAME')), 'no readable .env/OPENSHIFT_APP_NAME in'],
    ['has an application name that would break the JSON', (home: string) => writeFileSync(join(home, '.env/OPENSHIFT_APP_NAME'), 'x","doNotMove":false,"y":"'), 'is not a plain name'],
    ['has an application name longer than OpenShift allows', (home: string) => writeFileSync(join(home, '.env/OPENSHIFT_APP_NAME'), 'a'.repeat(33)), 'longer than 32'],
  ])('leaves the gear list out (one log line) but still sends the counts when a gear %s', async (_label, spoil, line) => {
    agent.node.appGear(1, 'blog', 'unscaled', 'started');
    spoil(agent.node.appGear(2, 'shop', 'secondary', 'started'));
    const { message, stderr } = await report();
    expect(message).toMatchObject({ activeGears: 2, disruptiveGears: 1 });
    expect(message.gears).toBeUndefined();
    expect(stderr).toContain('nodescaler-agent: gear list left out: ');
    expect(stderr).toContain(line);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it(`lists at most ${MAX_STORED_GEARS} gears (what the evaluator keeps), within the SQS and argument size limits`, async () => {
    for (let n = 1; n <= MAX_STORED_GEARS; n++) {
      const home = agent.node.appGear(n, `${'a'.repeat(28)}${String(n).padStart(4, '0')}`, n % 2 ? 'head' : 'secondary', n % 3 ? 'started' : 'idle');
      writeFileSync(join(home, MARKER), '');
    }
    agent.node.writeEnv({ NODESCALER_PROFILE: 'p'.repeat(64) });
    writeFileSync(agent.node.limits, 'max_active_gears=200\n');
    const full = await report();
    expect(full.message.gears).toHaveLength(MAX_STORED_GEARS);
    const bytes = Buffer.byteLength(agent.node.sent());
    // One argument of execve is at most 128 KiB on Linux; the body travels as one.
    expect(bytes).toBeLessThan(Math.min(MAX_BODY_BYTES, 128 * 1024));
    expect(readFileSync(AGENT, 'utf8')).toContain(`MAX_LISTED=${MAX_STORED_GEARS}\n`);

    agent.node.appGear(MAX_STORED_GEARS + 1, 'one-more', 'secondary', 'started');
    const over = await report();
    expect(over.message.gears).toBeUndefined();
    expect(over.message.activeGears).toBe(full.message.activeGears + 1);
    expect(over.stderr).toBe(`nodescaler-agent: gear list left out: more than ${MAX_STORED_GEARS} gears\n`);
  });
});
