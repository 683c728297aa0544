/**
 * An operator at the CLI during a reliability scenario: `drain NODE`, `drain NODE --replace` and `cancel-drain NODE`
 * as `nodescaler` runs them (lib/cli/safe-drain.ts, lib/cli/nodes.ts), each in an invocation of its own, so the
 * scenario's faults reach the CLI's writes and sends too (a crash is the operator's process killed mid-command). A
 * refusal (exit 4, 3) and an injected fault are the operator's to read; anything else the CLI throws is a violation.
 * The node is picked as an operator would: an active one to drain, a draining or waiting one to cancel, where the pool
 * has one.
 */
import fc from 'fast-check';
import { CliError } from '../../../lib/cli/exit.js';
import { cancelDrain } from '../../../lib/cli/nodes.js';
import { safeDrain } from '../../../lib/cli/safe-drain.js';
import type { OpenTarget } from '../../../lib/cli/target.js';
import type { Config } from '../../../lib/config/index.js';
import { NodescalerError } from '../../../lib/errors.js';
import type { Clock } from '../../../lib/ports/clock.js';
import type { Queue } from '../../../lib/ports/queue.js';
import type { StateStore } from '../../../lib/ports/state-store.js';
import type { FaultInjector } from './faults.js';

export interface OperatorAction {
  /** The scenario minute (1 is the first) at which the command runs. */
  minute: number;
  /** The node, by its place among the pool's nodes of the state the command wants, sorted by id (modulo their number). */
  node: number;
  command: 'drain' | 'drain --replace' | 'cancel-drain';
  /** After a drain that went through: minutes until the operator thinks better of it and cancels it (0: at once). */
  cancelAfter?: number;
  /**
   * That cancel runs while the functions take the minute's messages, not before: at once (`cancelAfter: 0`), it races
   * the gear mover taking the drain's message, and the injector lets either run between any two port calls.
   */
  racing?: boolean;
}

/** At most three commands, within the scenario's first half hour (most scenarios last longer); a cancel one in five. */
export const operatorArbitrary: fc.Arbitrary<OperatorAction[]> = fc.array(
  fc.record({
    minute: fc.integer({ min: 1, max: 30 }),
    node: fc.integer({ min: 0, max: 7 }),
    command: fc.constantFrom<OperatorAction['command']>('drain', 'drain --replace', 'drain', 'drain --replace', 'cancel-drain'),
    cancelAfter: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
    racing: fc.boolean(),
  }),
  { minLength: 1, maxLength: 3 },
);

export interface OperatorTally {
  /** Commands that did what they asked (a drain sent or a replacement asked for, a drain stopped). */
  done: number;
  /** Commands the CLI refused, with its exit code and message. */
  refused: number;
  /** Tries an injected fault or crash stopped (each is tried again, up to three times). */
  faulted: number;
  /** Of those done, cancels of a drain that had not begun (waiting for its replacement or for the gear mover). */
  cancelledBeforeBegun: number;
  /** Of those, drains the gear mover created from a message it took as the cancel was written: refused at their first step. */
  createdThenRefused: number;
}

export const OPERATOR = 'reliability operator';
/** Tries of a command a fault stopped. */
const ATTEMPTS = 3;

export class ScenarioOperator {
  readonly tally: OperatorTally = { done: 0, refused: 0, faulted: 0, cancelledBeforeBegun: 0, createdThenRefused: 0 };
  private readonly target: OpenTarget;

  constructor(
    private readonly actions: readonly OperatorAction[],
    ports: { store: StateStore; queue: Queue },
    private readonly config: Config,
    private readonly clock: Clock,
    private readonly injector: FaultInjector,
    /** The store as the world sees it, to pick a node without a fault. */
    private readonly plainStore: StateStore,
    private readonly pool: string,
    private readonly violations: string[],
  ) {
    this.target = {
      spec: { kind: 'local', stateDir: 'reliability', configFile: 'reliability' } as unknown as OpenTarget['spec'],
      store: ports.store,
      queue: ports.queue,
      identity: { whoAmI: async () => OPERATOR },
      queueLocation: (name) => `reliability queue ${name}`,
      close: async () => undefined,
    };
  }

  /** Drains cancelled before they began, with when. */
  private readonly cancelled = new Map<string, string>();
  /** Cancels of drains that went through, by node: the drain's `cancelAfter`. */
  private readonly cancelsDue: Array<{ minute: number; nodeId: string; racing: boolean }> = [];

  async act(minute: number): Promise<void> {
    for (const action of this.actions) {
      if (action.minute !== minute) continue;
      // As an operator would: a drain of an active node, a cancel of a draining one or one whose drain waits, when the
      // pool has such a node.
      const all = (await this.plainStore.listNodes(this.pool)).sort((a, b) => a.nodeId.localeCompare(b.nodeId));
      const waiting = new Set((await this.plainStore.listControls()).pendingDrains.map((pending) => pending.nodeId));
      const wanted = all.filter((node) => (action.command === 'cancel-drain' ? node.state === 'draining' || waiting.has(node.nodeId) : node.state === 'active'));
      const nodes = wanted.length > 0 ? wanted : all;
      if (nodes.length === 0) continue;
      const nodeId = nodes[action.node % nodes.length]!.nodeId;
      const result = await this.tries(action, nodeId);
      if (result === 'done' && action.command !== 'cancel-drain' && action.cancelAfter !== undefined) this.cancelsDue.push({ minute: minute + action.cancelAfter, nodeId, racing: action.racing === true });
    }
    // After this minute's commands: a cancel `cancelAfter: 0` comes before the gear mover takes the drain's message.
    await this.cancels(minute, false);
  }

  /** The cancels due this minute that run while the functions take the minute's messages (`racing`). */
  async racingCancels(minute: number): Promise<void> {
    await this.cancels(minute, true);
  }

  private async cancels(minute: number, racing: boolean): Promise<void> {
    for (const due of this.cancelsDue.filter((candidate) => candidate.minute === minute && candidate.racing === racing)) {
      await this.tries({ minute, node: 0, command: 'cancel-drain' }, due.nodeId);
    }
  }

  /** A command a fault stopped is run again, as an operator runs it again: it must then finish or say what stands. */
  private async tries(action: OperatorAction, nodeId: string): Promise<'done' | 'refused' | 'faulted' | 'threw'> {
    let result: 'done' | 'refused' | 'faulted' | 'threw' = 'faulted';
    for (let attempt = 1; attempt <= ATTEMPTS && result === 'faulted'; attempt++) result = await this.run(action, nodeId);
    return result;
  }

  private async run(action: OperatorAction, nodeId: string): Promise<'done' | 'refused' | 'faulted' | 'threw'> {
    const outcome = await this.injector.invocation<unknown>(() =>
      action.command === 'cancel-drain'
        ? cancelDrain(this.target, this.config, this.clock, nodeId, 'reliability scenario', OPERATOR)
        : safeDrain(this.target, this.config, this.clock, nodeId, 'reliability scenario', action.command === 'drain --replace'),
    );
    let result: 'done' | 'refused' | 'faulted' | 'threw';
    if (outcome.crashed) result = 'faulted';
    else if (outcome.error === undefined) result = 'done';
    else if (outcome.error instanceof CliError) result = 'refused';
    else if (outcome.error instanceof NodescalerError) result = 'faulted';
    else result = 'threw';
    if (result === 'threw') this.violations.push(`${this.clock.now().toISOString()}: nodescaler ${action.command} ${nodeId} threw ${String(outcome.error)}`);
    else this.tally[result] += 1;
    const view = outcome.result as { waiting?: string; changed?: boolean; drainId?: string } | undefined;
    if (result === 'done' && view?.waiting !== undefined) {
      this.tally.cancelledBeforeBegun += 1;
      if (view.changed && view.drainId) this.cancelled.set(view.drainId, this.clock.now().toISOString());
    }
    return result;
  }

  /**
   * A drain cancelled before it began never begins. The gear mover may have created it from a message it took as the
   * cancel was written; its first step then refuses it, before the node is closed or a gear moves.
   */
  async settled(): Promise<void> {
    for (const [drainId, at] of this.cancelled) {
      const drain = await this.plainStore.getDrain(drainId);
      if (!drain) continue;
      if (drain.state === 'aborted' && drain.closedAt === undefined && drain.moves.length === 0) this.tally.createdThenRefused += 1;
      else this.violations.push(`${at}: drain ${drainId} of ${drain.nodeId} began (${drain.startedAt}, ${drain.state}) after cancel-drain cancelled it before it began`);
    }
  }
}
