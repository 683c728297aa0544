/**
 * What tenants feel of a replay: every gear move is an `oo-admin-move` (stop,
 * copy, start elsewhere), so a move of a gear that serves traffic alone is an
 * outage of its application.
 *
 * The application model (the same for nodescaler and every baseline): each
 * new gear joins the application being filled, or opens a new one whose size
 * is drawn Zipf-like, 1..10 gears, P(size) proportional to size^-exponent
 * (the default mix, exponent 2.5: about 76 % of applications have one gear,
 * 13 % two, 5 % three; 1.5 gears on average). The first gear of an
 * application is its head gear (web proxy and state). An application is idle
 * with probability `idleShare` (default 0.3: OpenShift idles inactive
 * applications; an idle gear still holds its slot here, and moving it
 * restarts nothing). A move is disruptive when the gear is active and belongs
 * to a single-gear application or is its application's head. A trace may
 * carry its own mix (`Trace.apps`): a platform whose tenants never idle, or
 * whose applications are scaled, weighs a drain differently.
 */

const SIZES = 10;

/** Who the gears belong to: the share of idle applications, and how steeply application sizes fall off. */
export interface AppMix {
  /** Share of applications that are idle (0..1). */
  idleShare: number;
  /** P(size) proportional to size^-sizeExponent, sizes 1..10 (0: every size alike; large: nearly every application one gear). */
  sizeExponent: number;
}

export const DEFAULT_APP_MIX: Readonly<AppMix> = { idleShare: 0.3, sizeExponent: 2.5 };

/** Relative weights of application sizes 1..10 under `exponent`. */
export function appSizeWeights(exponent: number): number[] {
  return Array.from({ length: SIZES }, (_, i) => (i + 1) ** -exponent);
}

export const APP_SIZE_WEIGHTS: readonly number[] = appSizeWeights(DEFAULT_APP_MIX.sizeExponent);
export const IDLE_APP_SHARE = DEFAULT_APP_MIX.idleShare;

/** The reader's text for a mix, e.g. `idle 30 %, sizes ^-2.5 (76 % single-gear)`. */
export function appMixText(mix: AppMix): string {
  const weights = appSizeWeights(mix.sizeExponent);
  const single = weights[0]! / weights.reduce((a, b) => a + b, 0);
  return `idle ${Math.round(mix.idleShare * 100)} %, sizes ^-${mix.sizeExponent} (${Math.round(single * 100)} % single-gear)`;
}

const WEEK_SECONDS = 7 * 86400;
const DISRUPTIVE = 1;
const IDLE = 2;

/** Assigns gears to applications as they are created; remembers, per gear, whether moving it restarts something. */
export class AppModel {
  private remaining = 0;
  private appIdle = false;
  private flags = new Uint8Array(1024);
  /** Each gear's application, for placement that keeps an application's gears apart. */
  private appIds = new Int32Array(1024);
  private readonly cumulative: number[];
  created = 0;

  constructor(
    private readonly random: () => number,
    private readonly mix: AppMix = DEFAULT_APP_MIX,
  ) {
    const weights = appSizeWeights(mix.sizeExponent);
    const total = weights.reduce((sum, w) => sum + w, 0);
    let running = 0;
    this.cumulative = weights.map((w) => (running += w / total));
  }

  private pending?: { id: number; app: number; disruptive: boolean; idle: boolean };
  private appCount = 0;

  /** The gear `next` will create, without creating it (a gear that finds no room is not created yet). */
  peek(): { id: number; app: number; disruptive: boolean; idle: boolean } {
    if (this.pending) return this.pending;
    let head = false;
    let single = false;
    if (this.remaining === 0) {
      const draw = this.random();
      let size = this.cumulative.findIndex((c) => draw < c) + 1;
      if (size <= 0) size = SIZES;
      this.remaining = size;
      this.appIdle = this.random() < this.mix.idleShare;
      this.appCount += 1;
      head = true;
      single = size === 1;
    }
    this.remaining -= 1;
    this.pending = { id: this.created, app: this.appCount, disruptive: !this.appIdle && (head || single), idle: this.appIdle };
    return this.pending;
  }

  /** A new gear; its id (0, 1, 2, …), its application and whether moving it is disruptive. */
  next(): { id: number; app: number; disruptive: boolean; idle: boolean } {
    const gear = this.peek();
    delete this.pending;
    this.created += 1;
    if (gear.id >= this.flags.length) {
      const grown = new Uint8Array(this.flags.length * 2);
      grown.set(this.flags);
      this.flags = grown;
      const apps = new Int32Array(this.appIds.length * 2);
      apps.set(this.appIds);
      this.appIds = apps;
    }
    this.flags[gear.id] = (gear.disruptive ? DISRUPTIVE : 0) | (gear.idle ? IDLE : 0);
    this.appIds[gear.id] = gear.app;
    return gear;
  }

  /** The application of a gear `next` created (0 for one it did not). An application's gears have consecutive ids. */
  appOf(id: number): number {
    return this.appIds[id] ?? 0;
  }

  disruptive(id: number): boolean {
    return ((this.flags[id] ?? 0) & DISRUPTIVE) !== 0;
  }

  /** Whether the gear's application is idle (moving it restarts nothing). */
  idle(id: number): boolean {
    return ((this.flags[id] ?? 0) & IDLE) !== 0;
  }
}

export interface DisruptionFigures {
  gearMoves: number;
  /** Moves / mean gears / days. */
  movesPerGearDay: number;
  /** Over every gear that existed during the run, moved or not. */
  movesPerGearP95: number;
  movesPerGearMax: number;
  /** Gears moved at least twice within some 7 days. */
  gearsMovedTwiceIn7d: number;
  disruptiveMoves: number;
  drainsStarted: number;
  drainsAborted: number;
}

/** Collects completed moves by gear, and the drains; figures at the end. */
export class MoveLedger {
  private readonly byGear = new Map<number, number[]>();
  moves = 0;
  disruptive = 0;
  drainsStarted = 0;
  drainsAborted = 0;

  /** A move of gear `gear` that completed at `at` seconds. */
  record(gear: number, at: number, disruptive: boolean): void {
    this.moves += 1;
    if (disruptive) this.disruptive += 1;
    const times = this.byGear.get(gear);
    if (times) times.push(at);
    else this.byGear.set(gear, [at]);
  }

  /** `gearsSeen`: every gear that existed in the run; `meanGears` and `days` normalise the rate. */
  figures(gearsSeen: number, meanGears: number, days: number): DisruptionFigures {
    const counts: number[] = [];
    let twice = 0;
    for (const times of this.byGear.values()) {
      counts.push(times.length);
      times.sort((a, b) => a - b);
      for (let i = 1; i < times.length; i++) {
        if (times[i]! - times[i - 1]! <= WEEK_SECONDS) {
          twice += 1;
          break;
        }
      }
    }
    counts.sort((a, b) => a - b);
    const population = Math.max(gearsSeen, counts.length);
    // Gears never moved are the zeros below the sorted counts.
    const quantile = (q: number) => {
      if (population === 0) return 0;
      const rank = Math.ceil(q * population) - 1;
      const fromTop = population - 1 - rank;
      return fromTop < counts.length ? counts[counts.length - 1 - fromTop]! : 0;
    };
    return {
      gearMoves: this.moves,
      movesPerGearDay: meanGears > 0 && days > 0 ? this.moves / meanGears / days : 0,
      movesPerGearP95: quantile(0.95),
      movesPerGearMax: counts.reduce((max, c) => (c > max ? c : max), 0),
      gearsMovedTwiceIn7d: twice,
      disruptiveMoves: this.disruptive,
      drainsStarted: this.drainsStarted,
      drainsAborted: this.drainsAborted,
    };
  }
}
