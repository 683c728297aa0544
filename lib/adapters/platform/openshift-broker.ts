import { GetCommandInvocationCommand, ListCommandsCommand, SendCommandCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { Settings } from '../../config/index.js';
import type { GearInfo } from '../../domain/model.js';
import type { NodePlacement } from '../../domain/placement.js';
import { fnv1a64 } from '../../domain/drain.js';
import { NodescalerError, NotFoundError, TransientError, ValidationError } from '../../errors.js';
import { systemClock, type Clock } from '../../ports/clock.js';
import type { InvocationDeadline } from '../../ports/deadline.js';
import type { MoveHandle, MoveOptions, MoveStatus, Platform } from '../../ports/platform.js';
import { NodeInOtherDistrictError, NodeNotEmptyError, NodeNotInDistrictError, NodeStillActiveError } from '../../ports/platform-errors.js';
import { brokerSsmClients, errorName, translateSsmError } from './broker-ssm.js';
import { checkDistrict, checkGear, checkNode, checkPlacement, regionConflict, SAFE_BROKER_DIR, SAFE_NODE, SAFE_UUID } from './broker-arguments.js';
import {
  classifyDistrictOutput,
  exitCodeOf,
  failedMove,
  firstLine,
  parseGearListing,
  parseGearLocation,
  parseMoveReport,
  parseNodeDistrict,
  type NodeDistrict,
  parseNodeFacts,
} from './broker-output.js';

export { parseGearListing, parseMoveReport, parseNodeFacts } from './broker-output.js';

/** The stage's SSM document (infra/broker-document.yml): the only one the functions may send. */
export function brokerDocumentName(stage: string): string {
  return `nodescaler-${stage}-broker-admin`;
}
/** SSM: a command not delivered within this many seconds expires (the API's minimum is 30). */
export const DELIVERY_TIMEOUT_SECONDS = 60;
/** Gears the document's `list-gears` prints per page: `StandardOutputContent` holds at most 24,000 characters. */
export const LIST_PAGE_SIZE = 150;
/** How long the pages of a listing cut short are kept for the next call to resume (older: listed again). */
export const LISTING_RESUME_MS = 5 * 60_000;
/** How far back a move started before a crash is looked for (ListCommands `InvokedAfter`). */
export const MOVE_LOOKBACK_MS = 24 * 3_600_000;

export { SAFE_BROKER_DIR, SAFE_DISTRICT, SAFE_NODE, SAFE_REGION, SAFE_UUID } from './broker-arguments.js';

export type BrokerAction =
  | 'add-node'
  | 'set-region'
  | 'remove-node'
  | 'deactivate-node'
  | 'activate-node'
  | 'move'
  | 'list-gears'
  | 'node-facts'
  | 'node-district'
  | 'gear-location';
type DistrictCommand = 'deactivate-node' | 'activate-node' | 'add-node' | 'set-region' | 'remove-node';

export interface OpenShiftBrokerOptions {
  /** The broker host (an SSM managed instance). */
  brokerInstanceId: string;
  /** The nodescaler SSM document of the stage (`brokerDocumentName`). */
  documentName: string;
  /** Longest run of an admin command; SSM stops it after this (executionTimeout). */
  commandTimeoutMs: number;
  /** The broker's installation directory (its Rails environment). */
  brokerDir: string;
  /**
   * The client SendCommand goes through, when it is not `client`: one the SDK
   * retries only when throttled (`brokerSsmClients`), since a move sent again
   * after a timeout would run twice. Reads keep `client`'s retries.
   */
  senderClient?: SSMClient;
  /** How long a command whose result is awaited (district changes, gear listing) may take. Default 2 minutes. */
  syncTimeoutMs?: number;
  /** How often an awaited command is looked at. Default 1 s. */
  pollIntervalMs?: number;
  sleep?: (ms: number) => Promise<void>;
  clock?: Clock;
  /** The invocation's end (set by the handler): an awaited command is given up before it, never waited past it. */
  deadline?: InvocationDeadline;
}

type Invocation = { status: string; stdout: string; stderr: string; details: string };
type Parameters = { node: string; district?: string; gear?: string; offset?: number; region?: string; zone?: string };

const RUNNING = new Set(['Pending', 'InProgress', 'Delayed', 'Cancelling']);

/**
 * `Platform` on an OpenShift broker host through SSM Run Command, with the
 * stage's own document (infra/broker-document.yml), never a shell: every
 * argument is a document parameter that SSM checks against its pattern, and
 * that this adapter checks before sending.
 *
 * - District changes (`oo-admin-ctl-district -c <command>`), awaited. The
 *   tool's refusals are typed (lib/ports/platform-errors.ts): a repeat it
 *   refuses as done ("already deactivated" / "already active") is success;
 *   "doesn't belong to district" is `NodeNotInDistrictError` (a
 *   `NotFoundError`: for remove-node the wanted end state); remove-node of a
 *   node still active deactivates it first, as the tool requires; add-node
 *   answers "already belongs to another district" for this district too, so
 *   the adapter asks which district holds the node: this one is success,
 *   another is `NodeInOtherDistrictError`. With a placement, add-node runs
 *   with `-r REGION -z ZONE`; a node already in the district in no region is
 *   placed with `set-region`, one in another region is refused
 *   (`ValidationError` on `openshiftRegion`), as is a region or zone the
 *   broker lacks.
 * - Gears of a node, a node's figures, a node's district, a gear's node:
 *   read-only queries of the document, awaited.
 * - Moves: `oo-admin-move --json`, not awaited: the SSM command id is the
 *   handle, `moveStatus` reads the JSON report on a later step. oo-admin-move
 *   exits 1 when a move failed, and also when the gear moved but its old copy
 *   could not be removed: a failed report, or no report at all, is checked
 *   against where the gear is now, so a completed move is never reported
 *   failed. The command's Comment carries a hash of the idempotency key, so a
 *   start repeated after a crash (`mayExist`) finds the command sent before.
 *
 * SDK errors become `TransientError` (throttling, 5xx, network, broker not
 * reachable by SSM) or `ValidationError` (access denied, bad document or
 * parameters: configuration to fix).
 */
export class OpenShiftBrokerPlatform implements Platform {
  private readonly syncTimeoutMs: number;
  private readonly pollIntervalMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly clock: Clock;
  /** Gear listings cut short by the invocation's end, by node: resumed by the next call. */
  private readonly listings = new Map<string, { startedAt: number; offset: number; gears: Map<string, GearInfo> }>();

  constructor(
    private readonly client: SSMClient,
    private readonly options: OpenShiftBrokerOptions,
  ) {
    if (options.brokerInstanceId.includes('*')) {
      throw new ValidationError({ path: 'platform.brokerInstanceId', message: 'must name one instance, not a wildcard', value: options.brokerInstanceId }, 'configuration');
    }
    if (!SAFE_BROKER_DIR.test(options.brokerDir)) {
      throw new ValidationError({ path: 'platform.brokerDir', message: 'must be an absolute path of letters, digits, ".", "_", "-" and "/"', value: options.brokerDir }, 'configuration');
    }
    this.syncTimeoutMs = options.syncTimeoutMs ?? 120_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.clock = options.clock ?? systemClock;
  }

  /**
   * Every gear of the node, page by page. A listing the invocation's end
   * cuts short keeps its pages and is resumed by the next call within
   * LISTING_RESUME_MS, instead of starting over: a node of thousands of gears
   * takes more pages than one invocation can await. A resumed listing may
   * miss a gear that shifted between pages (another left meanwhile): the
   * drain plans it on a later round; it never makes a node look empty (an
   * empty node is one page, listed whole).
   */
  async listGears(nodeId: string): Promise<GearInfo[]> {
    checkNode(nodeId);
    const now = this.clock.now().getTime();
    const kept = this.listings.get(nodeId);
    this.listings.delete(nodeId);
    const listing = kept !== undefined && now - kept.startedAt < LISTING_RESUME_MS ? kept : { startedAt: now, offset: 0, gears: new Map<string, GearInfo>() };
    for (let page = 0; page < 1_000; page++) {
      let result: Invocation;
      try {
        result = await this.runAwaited('list-gears', { node: nodeId, offset: listing.offset }, `nodescaler list-gears ${nodeId}`);
      } catch (error) {
        if (listing.gears.size > 0) this.listings.set(nodeId, listing);
        throw error;
      }
      if (result.status !== 'Success') throw this.commandFailure(`list gears of ${nodeId}`, result);
      const parsed = parseGearListing(result.stdout);
      for (const gear of parsed.gears) listing.gears.set(gear.uuid, gear);
      if (parsed.next === undefined) return [...listing.gears.values()];
      listing.offset = parsed.next;
    }
    throw new TransientError(`list gears of ${nodeId}: too many pages`);
  }

  /** One awaited `node-facts` query; undefined when no district holds the node. */
  async readNodeFacts(nodeId: string): Promise<{ activeGears: number; maxActiveGears: number } | undefined> {
    checkNode(nodeId);
    const result = await this.runAwaited('node-facts', { node: nodeId }, `nodescaler node-facts ${nodeId}`);
    if (result.status !== 'Success') throw this.commandFailure(`node facts of ${nodeId}`, result);
    return parseNodeFacts(nodeId, result.stdout);
  }

  async deactivateNode(district: string, nodeId: string): Promise<void> {
    await this.district('deactivate-node', district, nodeId);
  }

  async activateNode(district: string, nodeId: string): Promise<void> {
    await this.district('activate-node', district, nodeId);
  }

  async addNode(district: string, nodeId: string, placement?: NodePlacement): Promise<void> {
    if (placement) checkPlacement(placement);
    try {
      await this.district('add-node', district, nodeId, placement);
    } catch (error) {
      if (!(error instanceof NodeInOtherDistrictError)) throw error;
      // The tool says "another district" for this one too: only the holder tells a repeat from a conflict.
      const holder = await this.nodeDistrict(nodeId);
      if (holder?.district !== district) throw new NodeInOtherDistrictError(district, nodeId, holder?.district);
      if (placement === undefined) return;
      // Added before the pool named its region (or by hand): placed now, or the node takes no gear where zones are required.
      if (holder.region === undefined) await this.district('set-region', district, nodeId, placement);
      else if (holder.region !== placement.region) throw regionConflict(nodeId, holder.region, placement);
    }
  }

  /** Removes an empty node from its district, deactivating it first if it is still active. */
  async removeNode(district: string, nodeId: string): Promise<void> {
    try {
      await this.district('remove-node', district, nodeId);
    } catch (error) {
      if (!(error instanceof NodeStillActiveError)) throw error;
      await this.district('deactivate-node', district, nodeId);
      await this.district('remove-node', district, nodeId);
    }
  }

  async startMove(gear: GearInfo, fromNode: string, toNode: string, options: MoveOptions = {}): Promise<MoveHandle> {
    checkNode(fromNode);
    checkNode(toNode);
    checkGear(gear.uuid);
    const comment = moveComment(gear.uuid, options.idempotencyKey);
    if (options.idempotencyKey !== undefined && options.mayExist) {
      const found = await this.findCommand(comment);
      if (found !== undefined) return { commandId: found };
    }
    const commandId = await this.send('move', { node: toNode, gear: gear.uuid }, comment, this.options.commandTimeoutMs);
    return { commandId };
  }

  async findMove(gear: GearInfo, fromNode: string, toNode: string, idempotencyKey: string): Promise<MoveHandle | undefined> {
    checkNode(fromNode);
    checkNode(toNode);
    checkGear(gear.uuid);
    const found = await this.findCommand(moveComment(gear.uuid, idempotencyKey));
    return found === undefined ? undefined : { commandId: found };
  }

  async moveStatus(handle: MoveHandle): Promise<MoveStatus> {
    const invocation = await this.invocation(handle.commandId);
    if (invocation === undefined || RUNNING.has(invocation.status)) return { state: 'running' };
    const report = parseMoveReport(invocation.stdout);
    if (invocation.status === 'Success' && report?.result === true) return { state: 'succeeded' };
    // No report: the tool's own output (the document's 2>&1) says why; SSM's stderr only says that it failed.
    const error = report?.message ?? `oo-admin-move ${invocation.status}: ${firstLine(invocation.stdout.replace(/(?:^|\n)EXIT\t\d+\s*$/, '')) || firstLine(invocation.stderr) || invocation.details || 'no output'}`;
    // Exit 1 also after a move that completed (its old copy not removed): where the gear is now decides.
    const sent = await this.sentMove(handle.commandId, report);
    if (sent !== undefined) {
      const at = await this.gearLocation(sent.target, sent.gear);
      if (at === sent.target) return { state: 'succeeded' };
      // The broker knows no such gear (deleted by its tenant, before or during the move): nothing is left to move.
      if (at === undefined) return { state: 'failed', error, gone: true };
    }
    return failedMove(error);
  }

  // -------------------------------------------------------------------------

  private async district(command: DistrictCommand, district: string, nodeId: string, placement?: NodePlacement): Promise<void> {
    checkNode(nodeId);
    checkDistrict(district);
    const result = await this.runAwaited(command, { node: nodeId, district, ...placement }, `nodescaler ${command} ${nodeId}`);
    const exit = result.status === 'Success' ? 0 : exitCodeOf(result.stdout);
    const answer = classifyDistrictOutput(exit ?? (result.status === 'Failed' ? 1 : undefined), `${result.stdout}\n${result.stderr}`);
    switch (answer.kind) {
      case 'done':
      case 'already':
        return;
      case 'not-in-district':
        throw new NodeNotInDistrictError(district, nodeId, `${command}: doesn't belong to district`);
      case 'in-a-district':
        throw new NodeInOtherDistrictError(district, nodeId);
      case 'must-deactivate':
        throw new NodeStillActiveError(district, nodeId);
      case 'holds-gears':
        throw new NodeNotEmptyError(district, nodeId, answer.detail);
      case 'district-not-found':
      case 'refused':
        throw new ValidationError({ path: 'district', message: `the broker refused ${command} of ${nodeId}: ${answer.detail}`, value: district });
      case 'region-refused':
        throw new ValidationError({ path: 'openshiftRegion', message: `the broker refused ${command} of ${nodeId}: ${answer.detail}`, value: placement ? `${placement.region}/${placement.zone}` : undefined });
      case 'has-region':
        throw new ValidationError({ path: 'openshiftRegion', message: `the broker refused ${command} of ${nodeId}: ${answer.detail}`, value: placement?.region });
      case 'unreachable':
      case 'unknown':
        throw this.commandFailure(`${command} ${nodeId}`, result);
    }
  }

  private async nodeDistrict(nodeId: string): Promise<NodeDistrict | undefined> {
    const result = await this.runAwaited('node-district', { node: nodeId }, `nodescaler node-district ${nodeId}`);
    if (result.status !== 'Success') throw this.commandFailure(`district of ${nodeId}`, result);
    return parseNodeDistrict(result.stdout);
  }

  private async gearLocation(anyNode: string, uuid: string): Promise<string | undefined> {
    const result = await this.runAwaited('gear-location', { node: anyNode, gear: uuid }, `nodescaler gear-location ${uuid}`);
    if (result.status !== 'Success') throw this.commandFailure(`location of gear ${uuid}`, result);
    return parseGearLocation(result.stdout);
  }

  /** The gear and target of a move command: from its report, else from the command as sent (ListCommands). */
  private async sentMove(commandId: string, report: ReturnType<typeof parseMoveReport>): Promise<{ gear: string; target: string } | undefined> {
    if (report?.destination !== undefined && SAFE_NODE.test(report.destination) && SAFE_UUID.test(report.uuid)) {
      return { gear: report.uuid, target: report.destination };
    }
    let output;
    try {
      output = await this.client.send(new ListCommandsCommand({ CommandId: commandId, InstanceId: this.options.brokerInstanceId }));
    } catch (error) {
      throw translateSsmError(error, 'ListCommands');
    }
    const parameters = output?.Commands?.[0]?.Parameters;
    const gear = parameters?.gear?.[0];
    const target = parameters?.node?.[0];
    return gear !== undefined && target !== undefined && SAFE_UUID.test(gear) && SAFE_NODE.test(target) ? { gear, target } : undefined;
  }

  /** Sends a command and waits for its end; a command still running at the timeout is a TransientError. */
  private async runAwaited(action: BrokerAction, parameters: Parameters, comment: string): Promise<Invocation> {
    // Never past the invocation's end: a command whose answer cannot be awaited is not sent (its work is repeated next
    // time; every awaited command is idempotent or read-only), and one sent is given up in time to record that.
    const left = this.options.deadline?.remaining() ?? Infinity;
    const waitMs = Math.min(this.syncTimeoutMs, left);
    if (waitMs < 2 * this.pollIntervalMs) {
      throw new TransientError(`broker command ${action} ${parameters.node} not sent: the invocation has ${Math.max(0, Math.round(left))} ms left; tried again next time`);
    }
    const commandId = await this.send(action, parameters, comment.slice(0, 100), this.syncTimeoutMs);
    const deadline = this.clock.now().getTime() + waitMs;
    for (;;) {
      await this.sleep(Math.min(this.pollIntervalMs, Math.max(1, deadline - this.clock.now().getTime())));
      const invocation = await this.invocation(commandId);
      if (invocation !== undefined && !RUNNING.has(invocation.status)) return invocation;
      if (this.clock.now().getTime() >= deadline) {
        const why = waitMs < this.syncTimeoutMs ? `before the invocation's end (${waitMs} ms)` : `within ${this.syncTimeoutMs} ms`;
        throw new TransientError(`broker command ${commandId} (${comment}) did not finish ${why}; its result is looked at again next time`);
      }
    }
  }

  private async send(action: BrokerAction, parameters: Parameters, comment: string, timeoutMs: number): Promise<string> {
    const values: Record<string, string[]> = {
      action: [action],
      node: [parameters.node],
      brokerDir: [this.options.brokerDir],
      executionTimeout: [String(Math.max(1, Math.ceil(timeoutMs / 1000)))],
    };
    if (parameters.district !== undefined) values.district = [parameters.district];
    if (parameters.gear !== undefined) values.gear = [parameters.gear];
    if (parameters.offset !== undefined) values.offset = [String(parameters.offset)];
    if (parameters.region !== undefined) values.region = [parameters.region];
    if (parameters.zone !== undefined) values.zone = [parameters.zone];
    try {
      const output = await (this.options.senderClient ?? this.client).send(
        new SendCommandCommand({
          InstanceIds: [this.options.brokerInstanceId],
          DocumentName: this.options.documentName,
          Comment: comment,
          TimeoutSeconds: DELIVERY_TIMEOUT_SECONDS,
          Parameters: values,
        }),
      );
      const commandId = output.Command?.CommandId;
      if (!commandId) throw new TransientError('SSM SendCommand returned no command id');
      return commandId;
    } catch (error) {
      throw translateSsmError(error, 'SendCommand');
    }
  }

  /** The invocation on the broker, or undefined while SSM does not know it yet (just after SendCommand). */
  private async invocation(commandId: string): Promise<Invocation | undefined> {
    try {
      const output = await this.client.send(new GetCommandInvocationCommand({ CommandId: commandId, InstanceId: this.options.brokerInstanceId }));
      return {
        status: output.Status ?? 'Pending',
        stdout: output.StandardOutputContent ?? '',
        stderr: output.StandardErrorContent ?? '',
        details: output.StatusDetails ?? '',
      };
    } catch (error) {
      if (errorName(error) === 'InvocationDoesNotExist') return undefined;
      if (errorName(error) === 'InvalidCommandId') throw new NotFoundError('broker command', commandId);
      throw translateSsmError(error, 'GetCommandInvocation');
    }
  }

  /** A command sent to the broker in the last day with this Comment. */
  private async findCommand(comment: string): Promise<string | undefined> {
    const after = new Date(this.clock.now().getTime() - MOVE_LOOKBACK_MS).toISOString();
    let nextToken: string | undefined;
    for (let page = 0; page < 20; page++) {
      let output;
      try {
        output = await this.client.send(
          new ListCommandsCommand({
            InstanceId: this.options.brokerInstanceId,
            Filters: [
              { key: 'InvokedAfter', value: after },
              { key: 'DocumentName', value: this.options.documentName },
            ],
            MaxResults: 50,
            ...(nextToken ? { NextToken: nextToken } : {}),
          }),
        );
      } catch (error) {
        throw translateSsmError(error, 'ListCommands');
      }
      const found = output.Commands?.find((command) => command.Comment === comment);
      if (found?.CommandId) return found.CommandId;
      nextToken = output.NextToken;
      if (!nextToken) return undefined;
    }
    return undefined;
  }

  private commandFailure(what: string, result: Invocation): NodescalerError {
    const detail = firstLine(result.stderr) || firstLine(result.stdout) || result.details || result.status;
    return new TransientError(`broker command ${what} ended ${result.status}: ${detail}`);
  }
}

export function moveComment(uuid: string, idempotencyKey?: string): string {
  return `nodescaler move ${uuid.slice(0, 64)}${idempotencyKey === undefined ? '' : ` ${fnv1a64(idempotencyKey)}`}`;
}

/** The stage's broker (`platform.brokerInstanceId`) through SSM Run Command (the client is built here: see ec2CloudFor in lib/adapters/ec2/cloud.ts). */
export function openShiftBrokerPlatformFor(settings: Settings, clock: Clock, deadline?: InvocationDeadline): OpenShiftBrokerPlatform {
  const { platform } = settings.config;
  if (platform.brokerInstanceId === undefined) {
    throw new ValidationError({ path: 'platform.brokerInstanceId', message: 'platform openshift-broker needs brokerInstanceId' }, 'configuration');
  }
  const clients = brokerSsmClients(settings.deployment.region);
  return new OpenShiftBrokerPlatform(clients.client, {
    senderClient: clients.senderClient,
    brokerInstanceId: platform.brokerInstanceId,
    documentName: brokerDocumentName(settings.deployment.stage),
    commandTimeoutMs: platform.commandTimeout,
    brokerDir: platform.brokerDir,
    clock,
    ...(deadline ? { deadline } : {}),
  });
}
