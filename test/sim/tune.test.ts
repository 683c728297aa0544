import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BaselineCache } from '../../lib/sim/baseline-cache.js';
import { syntheticTrace } from '../../lib/sim/synthetic.js';
import { checkVariants, formatAgainst, formatBySet, formatCheckTally, formatRanking, formatReachable, formatVariant, mergeOverrides, parseVariants, rankVariants, scoreTrace, scoreVariant, tallyChecks, tuneSuite, type TraceScore } from '../../lib/sim/tune.js';
import type { ReactiveFloor } from '../../lib/sim/floor.js';
import { emptyMoveCauses } from '../../lib/sim/move-causes.js';
import { POLICIES } from '../../lib/sim/results.js';
import { policyResult, reactiveRun } from '../support/builders.js';

const ROOT = resolve(import.meta.dirname, '../..');
const REPLAY = { gearsPerNode: 100, bootDelaySeconds: 120, seed: 42 };

function score(trace: string, figures: Partial<TraceScore>): TraceScore {
  return { trace, nodeHours: 100, gearMoves: 10, clairvoyantNodeHours: 100, clairvoyantMoves: 10, unplacedShare: 0, met: 4, of: 8, ...figures };
}

describe('variants', () => {
  it('parses a name-to-overrides map and names what is wrong otherwise', () => {
    expect(parseVariants('{"tight":{"scaleUp":{"threshold":0.95}}}', 'inline')).toEqual({ tight: { scaleUp: { threshold: 0.95 } } });
    expect(() => parseVariants('{"tight":', 'inline')).toThrow(/inline is not JSON/);
    expect(() => parseVariants('{}', 'inline')).toThrow(/at least one variant/);
    expect(() => parseVariants('{"tight":[1]}', 'inline')).toThrow(/variants\.tight.*expected an object/s);
  });

  it('merges objects key by key, so overriding one scale-up key keeps the simulated boot delay', () => {
    const base = { scaleUp: { threshold: 0.98, forecast: { bootDelay: '120s' } }, pools: [{ min: 1 }] };
    expect(mergeOverrides(base, { scaleUp: { headroomGears: 60 }, pools: [{ min: 2 }] })).toEqual({ scaleUp: { threshold: 0.98, forecast: { bootDelay: '120s' }, headroomGears: 60 }, pools: [{ min: 2 }] });
    expect(base.scaleUp).toEqual({ threshold: 0.98, forecast: { bootDelay: '120s' } });
  });

  it('refuses a variant whose configuration does not validate, naming it and the field', () => {
    const trace = syntheticTrace('noisy-flat', { days: 0.1, peakGears: 300, seed: 1 });
    expect(() => checkVariants({ ok: {}, bad: { scaleDown: { payoff: { factor: -1 } } } }, trace, REPLAY)).toThrow(/variant "bad"[\s\S]*scaleDown\.payoff\.factor/);
  });
});

describe('ranking', () => {
  it('puts the most goal checks met first, then fewer node-hours, then fewer moves (x clairvoyant-4h)', () => {
    const a = scoreVariant('a', [score('t1', { met: 5 }), score('t2', { met: 5 })]);
    const b = scoreVariant('b', [score('t1', { met: 6, nodeHours: 120 }), score('t2', { met: 5 })]);
    const c = scoreVariant('c', [score('t1', { met: 5, nodeHours: 90 }), score('t2', { met: 5 })]);
    const d = scoreVariant('d', [score('t1', { met: 5, nodeHours: 90, gearMoves: 5 }), score('t2', { met: 5 })]);
    expect(rankVariants([a, b, c, d]).map((s) => s.variant)).toEqual(['b', 'd', 'c', 'a']);
  });

  it('sums moves over the suite, so a trace where clairvoyant-4h moves nothing does not make the ratio infinite', () => {
    const s = scoreVariant('v', [score('flat', { gearMoves: 30, clairvoyantMoves: 0, unplacedShare: 0.002 }), score('daily', { gearMoves: 30, clairvoyantMoves: 20, nodeHours: 110 })]);
    expect(s.movesRatio).toBe(3);
    expect(s.nodeHoursRatio).toBeCloseTo(1.05, 10);
    expect([s.met, s.of, s.worstUnplacedShare]).toEqual([8, 16, 0.002]);
    const table = formatVariant(s);
    expect(table).toMatch(/^flat\s+1\.000\s+30 vs 0\s+0\.200\s+4\/8$/m);
    expect(table).toMatch(/^suite \(mean; moves summed; worst\)\s+1\.050\s+3\.00\s+0\.200\s+8\/16$/m);
    expect(formatRanking([s, scoreVariant('w', [score('flat', { met: 6 }), score('daily', { met: 6 })])])).toMatch(/^1\. w\s+12\/16[\s\S]*^2\. v\s+8\/16\s+1\.050\s+3\.00\s+0\.200\s+4 4$/m);
  });
});

describe('infeasible misses', () => {
  it('sums the misses the reactive floor shows infeasible, in the total row and the ranking', () => {
    const s = scoreVariant('v', [score('bursty', { met: 5, infeasible: 2 }), score('daily', { met: 7, infeasible: 1 })]);
    expect(s.infeasible).toBe(3);
    expect(formatVariant(s)).toMatch(/suite \(mean; moves summed; worst\).*12\/16, 3 of 4 misses infeasible/);
    expect(formatRanking([s])).toMatch(/^1\. v\s+12\/16, 3 of 4 misses infeasible/m);
  });

  it('says nothing of infeasibility when a trace was scored without its floor', () => {
    const s = scoreVariant('v', [score('bursty', { met: 5, infeasible: 2 }), score('daily', { met: 7 })]);
    expect(s.infeasible).toBeUndefined();
    expect(formatRanking([s])).not.toMatch(/infeasible/);
    expect(formatReachable(s)).toEqual([]);
  });

  it('lists the misses within reach trace by trace, as their goal line reads them', () => {
    const s = scoreVariant('v', [
      score('bursty', { met: 5, infeasible: 2, reachable: ['gear moves 1.58 x clairvoyant-4h <= 1.5'] }),
      score('daily', { met: 8, infeasible: 0, reachable: [] }),
      score('jobs', { met: 6, infeasible: 0, reachable: ['node-hours 1.121 x clairvoyant-4h <= 1.05', "node-hours < cluster-autoscaler's (1653 vs 1616)"] }),
    ]);
    expect(formatReachable(s)).toEqual([
      '  bursty: gear moves 1.58 x clairvoyant-4h <= 1.5',
      '  jobs: node-hours 1.121 x clairvoyant-4h <= 1.05',
      "  jobs: node-hours < cluster-autoscaler's (1653 vs 1616)",
    ]);
  });
});

describe('check by check', () => {
  const CHECKS = ['node-hours', 'moves', 'unplaced', 'cluster-autoscaler waiting'];
  const traces = [
    score('heldout:s1-1', { checked: CHECKS, missed: ['moves', 'unplaced'], infeasibleMissed: ['unplaced'], infeasible: 1 }),
    score('heldout:w1-1', { checked: CHECKS, missed: ['moves'], infeasibleMissed: [], infeasible: 0 }),
    score('heldout:u1-1', { checked: CHECKS.slice(0, 3), missed: ['unplaced'], infeasibleMissed: ['unplaced'], infeasible: 1 }),
  ];

  it('counts each check met, missed out of reach and missed within reach, over the traces that ran it', () => {
    expect(tallyChecks(traces)).toEqual([
      { check: 'node-hours', of: 3, met: 3, infeasible: 0, reachableOn: [] },
      { check: 'moves', of: 3, met: 1, infeasible: 0, reachableOn: ['heldout:s1-1', 'heldout:w1-1'] },
      { check: 'unplaced', of: 3, met: 1, infeasible: 2, reachableOn: [] },
      { check: 'cluster-autoscaler waiting', of: 2, met: 2, infeasible: 0, reachableOn: [] },
    ]);
  });

  it('names the traces that missed within reach, the first few and how many more', () => {
    const table = formatCheckTally(traces, 1)!;
    expect(table).toMatch(/^moves\s+1 of 3\s+0\s+2\s+s1-1 and 1 more$/m);
    expect(table).toMatch(/^unplaced\s+1 of 3\s+2\s+0\s*$/m);
  });

  it('tallies nothing when a trace was scored without its reactive floor: out of reach is unknown there', () => {
    const unfloored = [...traces, score('flat', { checked: CHECKS, missed: ['moves'] })];
    expect(tallyChecks(unfloored)).toEqual([]);
    expect(formatCheckTally(unfloored)).toBeUndefined();
  });
});

describe('by set', () => {
  const floored = (trace: string, figures: Partial<TraceScore>) => score(trace, { infeasible: 0, reachable: [], ...figures });
  const traces = [
    floored('synthetic:bursts', { nodeHours: 110, gearMoves: 30, met: 6, infeasible: 1, reachable: ['node-hours 1.100 x clairvoyant-4h <= 1.05'] }),
    floored('heldout:s9-1', { nodeHours: 90, gearMoves: 5, clairvoyantMoves: 0, met: 7, infeasible: 1 }),
    floored('heldout:s9-2', { nodeHours: 100, gearMoves: 15, clairvoyantMoves: 20, unplacedShare: 0.002, met: 8 }),
  ];
  const setOf = (trace: string) => (trace.startsWith('heldout:s9-') ? 'mixed:9' : trace.startsWith('synthetic:') ? 'suite' : undefined);

  it('scores each set on its own traces: checks with misses out of and within reach, mean node-hours, moves summed', () => {
    const table = formatBySet({ traces }, setOf)!;
    expect(table).toMatch(/^suite\s+6\/8, 1 of 2 misses infeasible\s+1\s+1\.100\s+3\.00\s+0\.000$/m);
    // s9-1's 5 moves where clairvoyant-4h moved none are summed with s9-2's: 20 of 20.
    expect(table).toMatch(/^mixed:9\s+15\/16, 1 of 1 misses infeasible\s+0\s+0\.950\s+1\.00\s+0\.200$/m);
  });

  it('prints nothing for one set, and leaves out a trace of no set', () => {
    expect(formatBySet({ traces: traces.slice(1) }, setOf)).toBeUndefined();
    expect(formatBySet({ traces: [...traces, floored('other', { met: 0 })] }, setOf)).not.toMatch(/other/);
  });
});

describe('against the defaults', () => {
  it('names, trace by trace, the checks a variant gained and lost, even where the count is unchanged', () => {
    const defaults = scoreVariant('defaults', [
      score('flat', { met: 7, missed: ['karpenter node-hours'] }),
      score('growth', { met: 6, missed: ['karpenter node-hours', 'cluster-autoscaler node-hours'] }),
    ]);
    const traded = scoreVariant('noshare', [
      score('flat', { met: 6, missed: ['karpenter node-hours', 'moves'] }),
      score('growth', { met: 7, missed: ['karpenter node-hours'] }),
    ]);
    const same = scoreVariant('same', defaults.traces);
    expect(traded.met).toBe(defaults.met);
    expect(formatAgainst([defaults, traded, same])).toEqual([
      'noshare against defaults: gained growth cluster-autoscaler node-hours; lost flat moves',
      'same against defaults: the same checks met on every trace',
    ]);
    expect(formatAgainst([traded], 'defaults')).toEqual([]);
  });

  it('says what the replay measured of a reachable miss: moves bought back, waiting beside closed nodes', () => {
    const results = [
      policyResult('nodescaler', {
        nodeHours: 100,
        gearMoves: 4505,
        unplacedShare: 0,
        unplacedGearMinutes: 2846,
        waitingBesideClosedGearMinutes: 717.4,
        moveCauses: { ...emptyMoveCauses(), total: 4505, boughtBack: 1969 },
      }),
      policyResult('clairvoyant-4h', { nodeHours: 100, gearMoves: 2334 }),
      policyResult('karpenter', { nodeHours: 90, gearMoves: 90_000 }),
      policyResult('cluster-autoscaler', { nodeHours: 120, gearMoves: 10, unplacedGearMinutes: 540 }),
    ];
    const anyRule = reactiveRun({ nodeHours: 90 });
    const floor: ReactiveFloor = { bootDelaySeconds: 120, nodeHoursLine: 105, floor: anyRule, forUnplacedGoal: anyRule, forClusterAutoscaler: anyRule, waitingNothing: anyRule };
    expect(scoreTrace('u18-5', results, floor).reachable).toEqual([
      'gear moves 1.93 x clairvoyant-4h <= 1.5 (1,969 of 4,505 in drains bought back within 4 h)',
      "waiting gear-min <= cluster-autoscaler's (2846 vs 540) (717 gear-min beside closed nodes' free slots)",
    ]);
    // Without a measure, the goal line's words alone.
    const plain = results.map((r) => (r.policy === 'nodescaler' ? { ...r, moveCauses: undefined, waitingBesideClosedGearMinutes: 0 } : r));
    expect(scoreTrace('u18-5', plain, floor).reachable).toEqual(['gear moves 1.93 x clairvoyant-4h <= 1.5', "waiting gear-min <= cluster-autoscaler's (2846 vs 540)"]);
  });

  it('scores each missed check by its name, the same on every trace', () => {
    const results = [
      policyResult('nodescaler', { nodeHours: 110, gearMoves: 40, unplacedShare: 0, unplacedGearMinutes: 0 }),
      policyResult('clairvoyant-4h', { nodeHours: 100, gearMoves: 20 }),
      policyResult('karpenter', { nodeHours: 90, gearMoves: 900 }),
      policyResult('cluster-autoscaler', { nodeHours: 120, gearMoves: 10, unplacedGearMinutes: 5 }),
    ];
    const scored = scoreTrace('t', results);
    expect(scored.missed).toEqual(['node-hours', 'moves', 'karpenter node-hours']);
    expect(scored.of - scored.met).toBe(3);
  });

  it("carries nodescaler's closes and reopens, and the ranking shows them per node-day only when a replay counted them", () => {
    const results = [
      policyResult('nodescaler', { nodeHours: 240, nodeToggles: { closes: 7, reopens: 5 } }),
      policyResult('clairvoyant-4h', { nodeHours: 240 }),
    ];
    expect(scoreTrace('t', results).nodeToggles).toBe(12);
    expect(scoreTrace('t', [policyResult('nodescaler', { nodeHours: 240 }), results[1]!]).nodeToggles).toBeUndefined();
    // 12 + 6 calls over 240 + 120 node-hours: 18 in 15 node-days.
    const counted = scoreVariant('v', [score('a', { nodeHours: 240, nodeToggles: 12 }), score('b', { nodeHours: 120, nodeToggles: 6 })]);
    expect(formatRanking([counted])).toMatch(/closes\+reopens per node-day[\s\S]*^1\. v\s+8\/16\s+\S+\s+\S+\s+0\.000\s+1\.20\s+4 4$/m);
    expect(formatRanking([scoreVariant('w', [score('a', {})])])).not.toMatch(/per node-day/);
  });
});

describe('tuneSuite', () => {
  it('replays every variant on every trace, and a second run takes the baselines from the cache', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nodescaler-tune-'));
    const traces = [
      { name: 'synthetic:step-change', load: () => syntheticTrace('step-change', { days: 0.5, peakGears: 400, seed: 3 }) },
      { name: 'synthetic:noisy-flat', load: () => syntheticTrace('noisy-flat', { days: 0.5, peakGears: 400, seed: 4 }) },
    ];
    const variants = { defaults: {}, 'wide headroom': { scaleUp: { headroomGears: 300 } } };
    const options = { traces, variants, replay: REPLAY, window: { days: 0.5, peakGears: 400 } };
    const progress: string[] = [];
    const first = new BaselineCache(dir);
    const scores = await tuneSuite({ ...options, cache: first, onProgress: (p) => p.fraction === 1 && progress.push(`${p.variant}/${p.trace}/${p.baselinesCached}`) });
    expect(progress).toEqual(['defaults/synthetic:step-change/false', 'defaults/synthetic:noisy-flat/false', 'wide headroom/synthetic:step-change/false', 'wide headroom/synthetic:noisy-flat/false']);
    expect([first.hits, first.misses]).toEqual([0, 2]);
    expect(scores.map((s) => [s.variant, s.traces.map((t) => t.trace)])).toEqual([
      ['defaults', ['synthetic:step-change', 'synthetic:noisy-flat']],
      ['wide headroom', ['synthetic:step-change', 'synthetic:noisy-flat']],
    ]);
    const [defaults, wide] = scores;
    // The same baselines for both variants; nodescaler differs: 300 gears of headroom keep about 3 more nodes.
    expect(wide!.traces.map((t) => t.clairvoyantNodeHours)).toEqual(defaults!.traces.map((t) => t.clairvoyantNodeHours));
    for (const [i, t] of wide!.traces.entries()) expect(t.nodeHours).toBeGreaterThan(defaults!.traces[i]!.nodeHours + 12);
    for (const s of scores) expect(s.of).toBe(16);
    // Each replay counts its closes and reopens (replay-figures.test.ts checks the count).
    for (const s of scores) expect(s.traces.every((t) => t.nodeToggles !== undefined)).toBe(true);
    // Scored with each trace's floor: every miss is either shown infeasible or listed as within reach.
    for (const t of scores.flatMap((s) => s.traces)) expect(t.reachable!.length + t.infeasible!).toBe(t.of - t.met);

    const second = new BaselineCache(dir);
    const again = await tuneSuite({ ...options, variants: { defaults: {} }, cache: second });
    expect([second.hits, second.misses]).toEqual([2, 0]);
    expect(again[0]!.traces).toEqual(defaults!.traces);
  });
});

describe('tuneSuite with a seed per trace', () => {
  it("replays a trace that carries its set's seed as a run at that seed, baselines and cache key included", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'nodescaler-tune-seed-'));
    const load = () => syntheticTrace('noisy-flat', { days: 0.25, peakGears: 300, seed: 5 });
    const window = { days: 0.25, peakGears: 300 };
    const atSeven = new BaselineCache(dir);
    const [own] = await tuneSuite({ traces: [{ name: 't', load }], variants: { defaults: {} }, replay: { ...REPLAY, seed: 7 }, window, cache: atSeven });
    const carried = new BaselineCache(dir);
    const [fromTrace] = await tuneSuite({ traces: [{ name: 't', load, seed: 7 }], variants: { defaults: {} }, replay: REPLAY, window, cache: carried });
    expect([carried.hits, carried.misses]).toEqual([1, 0]);
    expect(fromTrace!.traces).toEqual(own!.traces);
    const atDefault = new BaselineCache(dir);
    await tuneSuite({ traces: [{ name: 't', load }], variants: { defaults: {} }, replay: REPLAY, window, cache: atDefault });
    expect([atDefault.hits, atDefault.misses]).toEqual([0, 1]);
  });
});

describe('npm run bench -- tune', () => {
  it('prints a table per variant and the ranking, and refuses bad variants with exit code 2', () => {
    const cache = mkdtempSync(join(tmpdir(), 'nodescaler-tune-cli-'));
    const args = ['--import', 'tsx', 'scripts/bench.ts', 'tune', '{"f3":{"scaleDown":{"payoff":{"factor":3}}}}', '--only', 'noisy', '--days', '0.25', '--peak-gears', '300', '--cache', cache];
    const run = spawnSync(process.execPath, [...args, '--html', join(cache, 'tune.html')], { cwd: ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    // Two variants, a page each: the variant's name before the extension.
    expect(run.stdout).toMatch(/^wrote .*tune-defaults\.html$/m);
    const page = readFileSync(join(cache, 'tune-f3.html'), 'utf8');
    expect(page).toContain('nodescaler: tune, variant f3, the suite, seed 42');
    const data = JSON.parse(/<script type="application\/json" id="suite-data">(.*?)<\/script>/s.exec(page)![1]!) as { traces: string[]; points: Array<{ policy: string }> };
    expect(data.traces).toEqual(['synthetic:noisy-flat']);
    expect(new Set(data.points.map((p) => p.policy))).toEqual(new Set(POLICIES));
    expect(page).toMatch(/<tr data-trace="synthetic:noisy-flat"><td>synthetic:noisy-flat<\/td><td>\d\/8<\/td>/);
    expect(run.stdout).toMatch(/tune: 2 variants x 1 traces/);
    expect(run.stdout).toMatch(/nodescaler 100% \(baselines computed/);
    expect(run.stdout).toMatch(/^variant defaults \{\}: (\d)\/8 goal checks met, \d of (\d) misses infeasible$/m);
    expect(run.stdout).toMatch(/^variant f3 .*: \d\/8 goal checks met, \d of \d misses infeasible$/m);
    const [, met, misses] = /^variant defaults \{\}: (\d)\/8 goal checks met, \d of (\d) misses/m.exec(run.stdout)!;
    expect(Number(met) + Number(misses)).toBe(8);
    expect(run.stdout).toMatch(/baselines 0 cached, 1 computed/);
    expect(run.stdout).toMatch(/^1\. (defaults|f3) /m);
    expect(run.stdout).toMatch(/^f3 against defaults: (gained|lost|the same checks met on every trace)/m);
    const rerun = spawnSync(process.execPath, [...args, '--no-defaults'], { cwd: ROOT, encoding: 'utf8' });
    expect(rerun.stdout).toMatch(/tune: 1 variants x 1 traces/);
    expect(rerun.stdout).toMatch(/baselines 1 cached, 0 computed/);
    expect(rerun.stdout).not.toMatch(/^variant defaults/m);

    const bad = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'tune', '{"x":{"scaleUp":{"headroomGears":"many"}}}', '--only', 'noisy', '--days', '0.1', '--no-cache'], { cwd: ROOT, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/variant "x"[\s\S]*scaleUp\.headroomGears/);
    const missing = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'tune', 'no-such-file.json'], { cwd: ROOT, encoding: 'utf8' });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/VARIANTS: neither inline JSON nor an existing file.*no-such-file\.json/);
  });

  it('ranks the suite and held-out sets together with --sets, and refuses a bad set or a seed beside it', () => {
    const cache = mkdtempSync(join(tmpdir(), 'nodescaler-tune-sets-'));
    const args = ['--import', 'tsx', 'scripts/bench.ts', 'tune', '{"x":{}}', '--no-defaults', '--sets', 'suite,surge:2', '--heldout', '1', '--days', '0.05', '--peak-gears', '300', '--cache', cache];
    const run = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/tune: 1 variants x 9 traces \(0\.05 days, .*sets suite, surge:2, each replayed with its own seed \(the suite 42\)\)/);
    expect(run.stdout).toMatch(/^synthetic:step-change /m);
    expect(run.stdout).toMatch(/^heldout:u2-1 /m);
    expect(run.stdout).toMatch(/^sets \(mean; moves summed; worst\) .* \d+\/72, \d+ of \d+ misses infeasible$/m);
    expect(run.stdout).toMatch(/^check by check:\ncheck\s+met\s+missed, out of reach\s+missed, within reach\s+on$/m);
    expect(run.stdout).toMatch(/^invariant violations\s+9 of 9\s+0\s+0\s*$/m);
    expect(run.stdout).toMatch(/^by set:\nset\s+goal\s+within reach\s+node-hours x clairvoyant-4h \(mean\)/m);
    expect(run.stdout).toMatch(/^suite\s+\d+\/64, \d+ of \d+ misses infeasible\s+\d+\s+[\d.]+/m);
    expect(run.stdout).toMatch(/^surge:2\s+\d+\/8, \d+ of \d+ misses infeasible\s+\d+\s+[\d.]+/m);
    expect(run.stdout).not.toMatch(/^wrote /m);

    const bad = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'tune', '{"x":{}}', '--sets', 'suite,bursts:3', '--no-cache'], { cwd: ROOT, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--sets.*bursts:3/);
    const seeded = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/bench.ts', 'tune', '{"x":{}}', '--sets', 'surge:2', '--seed', '3', '--no-cache'], { cwd: ROOT, encoding: 'utf8' });
    expect(seeded.status).toBe(2);
    expect(seeded.stderr).toMatch(/--seed.*--sets names each set's seed/);
  });
});
