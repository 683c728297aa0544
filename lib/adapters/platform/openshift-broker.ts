import { GetCommandInvocationCommand, ListCommandsCommand, SendCommandCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { Settings } from '../../config/index.js';
import type { GearInfo } from '../../domain/model.js';
import { fnv1a64 } from '../../domain/drain.js';
import { NodescalerError, NotFoundError, TransientError, ValidationError } from '../../errors.js';
import { systemClock, type Clock } from '../../ports/clock.js';
import type { MoveHandle, MoveOptions, MoveStatus, Platform } from '../../ports/platform.js';

/** The SSM document every command runs with. */
export const SHELL_DOCUMENT = 'AWS-RunShellScript';
/** SSM: a command not delivered within this many seconds expires (the API's minimum is 30). */
export const DELIVERY_TIMEOUT_SECONDS = 60;
/** Gears listed per command: `StandardOutputContent` holds at most 24,000 characters. */
export const LIST_PAGE_SIZE = 150;
/** How far back a move started before a crash is looked for (ListCommands `InvokedAfter`). */
export const MOVE_LOOKBACK_MS = 24 * 3_600_000;

/**
 * The gear listing run on the broker host with `oo-ruby`: the gears whose
 * `server_identity` is the node, from the broker's own database (the same
 * query `oo-admin-ctl-district -c remove-node` uses to refuse a node that
 * still holds gears). Arguments: broker directory, node, offset, limit.
 * Output, one line each: `GEAR<TAB>uuid<TAB>app-namespace<TAB>gear size`, then
 * `NEXT<TAB>offset` when more remain or `END<TAB>count` when done. The end
 * line tells a complete answer from one SSM cut short.
 */
export const LIST_GEARS_RUBY = [
  'dir, node, offset, limit = ARGV[0], ARGV[1], ARGV[2].to_i, ARGV[3].to_i',
  'require "#{dir}/config/environment"',
  'Rails.configuration.analytics[:enabled] = false',
  'rows = []',
  'Application.where("gears.server_identity" => node).each do |app|',
  '  sizes = {}',
  '  app.group_instances.each { |gi| sizes[gi._id.to_s] = gi.gear_size }',
  '  app.gears.each do |g|',
  '    next unless g.server_identity == node',
  '    rows << [g.uuid.to_s, "#{app.name}-#{app.domain_namespace}", sizes[g.group_instance_id.to_s] || "unknown"]',
  '  end',
  'end',
  'rows.sort!',
  'rows[offset, limit].to_a.each { |r| puts (["GEAR"] + r).join("\\t") }',
  'puts(offset + limit < rows.size ? "NEXT\\t#{offset + limit}" : "END\\t#{rows.size}")',
].join('\n');

/**
 * A node's figures run on the broker host with `oo-ruby`: whether a district
 * holds the node (`District` `servers.name`), then two facts the node's
 * MCollective agent reports (`max_active_gears` from its
 * resource_limits.conf, `gears_active_count`), read with the broker's own
 * node proxy. Arguments: broker directory, node. Output: `UNKNOWN` for a node
 * no district holds, else `FACTS<TAB>active<TAB>max`; a fact the node does not
 * answer prints as empty, which the adapter refuses rather than guess.
 */
export const NODE_FACTS_RUBY = [
  'dir, node = ARGV[0], ARGV[1]',
  'require "#{dir}/config/environment"',
  'Rails.configuration.analytics[:enabled] = false',
  'unless District.where("servers.name" => node).exists?',
  '  puts "UNKNOWN"',
  '  exit 0',
  'end',
  'proxy = OpenShift::ApplicationContainerProxy.instance(node)',
  'facts = %w(gears_active_count max_active_gears).map { |f| proxy.send(:rpc_get_fact_direct, f).to_s.strip }',
  'puts (["FACTS"] + facts).join("\\t")',
].join('\n');

export interface OpenShiftBrokerOptions {
  /** The broker host (an SSM managed instance). */
  brokerInstanceId: string;
  /** Longest run of an admin command; SSM stops it after this (executionTimeout). */
  commandTimeoutMs: number;
  /** The broker's installation directory (its Rails environment). */
  brokerDir: string;
  /** How long a command whose result is awaited (district changes, gear listing) may take. Default 2 minutes. */
  syncTimeoutMs?: number;
  /** How often an awaited command is looked at. Default 1 s. */
  pollIntervalMs?: number;
  sleep?: (ms: number) => Promise<void>;
  clock?: Clock;
}

type Invocation = { status: string; stdout: string; stderr: string; details: string };

const RUNNING = new Set(['Pending', 'InProgress', 'Delayed', 'Cancelling']);
const SAFE_NODE = /^[a-z0-9._-]{1,253}$/;
const SAFE_DISTRICT = /^[A-Za-z0-9._-]{1,64}$/;
const SAFE_UUID = /^[A-Za-z0-9_-]{1,64}$/;
const ALREADY = /already (?:de)?activ|already (?:a member|belongs|exists|added|in district)/i;
const UNKNOWN = /not found|does not exist|no such|not a member|doesn't exist/i;
const TARGET_FULL = /capacity|max_active_gears|is full|no (?:available|free) (?:uid|slot)|out of (?:uids|gear slots)/i;

/** A value as one single-quoted shell word: `it's` becomes `'it'\''s'`. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * `Platform` on an OpenShift broker host through SSM Run Command
 * (`AWS-RunShellScript`): the broker's own admin tools, run as root there.
 *
 * - District changes: `oo-admin-ctl-district -c deactivate-node|activate-node|add-node|remove-node -n <district> -i <node>`,
 *   awaited (GetCommandInvocation every second). A repeat that the tool
 *   refuses as already done ("already deactivated", a node already removed)
 *   counts as success, so every call is idempotent.
 * - Gears of a node: `LIST_GEARS_RUBY` with `oo-ruby`, paged.
 * - A node's figures (`readNodeFacts`, for `nodescaler report-stats`):
 *   `NODE_FACTS_RUBY` with `oo-ruby`, one awaited command per node.
 * - Moves: `oo-admin-move --gear_uuid <uuid> -i <target> --json`, not awaited:
 *   the SSM command id is the handle the drain records, and `moveStatus`
 *   reads the JSON move report on a later step (oo-admin-move exits 0 even
 *   when a move failed, so only the report's `result` counts). The command's
 *   Comment carries a hash of the idempotency key, so a start repeated after a
 *   crash (`mayExist`) finds the command it sent before (ListCommands).
 *
 * Every argument is validated (host names, district names, gear uuids) and
 * single-quoted. SDK errors become `TransientError` (throttling, 5xx,
 * network, broker not reachable by SSM) or `ValidationError` (access denied,
 * bad document or parameters: configuration to fix).
 */
export class OpenShiftBrokerPlatform implements Platform {
  private readonly syncTimeoutMs: number;
  private readonly pollIntervalMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly clock: Clock;

  constructor(
    private readonly client: SSMClient,
    private readonly options: OpenShiftBrokerOptions,
  ) {
    this.syncTimeoutMs = options.syncTimeoutMs ?? 120_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1_000;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.clock = options.clock ?? systemClock;
  }

  async listGears(nodeId: string): Promise<GearInfo[]> {
    checkNode(nodeId);
    const gears: GearInfo[] = [];
    let offset = 0;
    for (let page = 0; page < 1_000; page++) {
      const script = `oo-ruby -e ${shellQuote(LIST_GEARS_RUBY)} ${shellQuote(this.options.brokerDir)} ${shellQuote(nodeId)} ${offset} ${LIST_PAGE_SIZE}`;
      const result = await this.runAwaited(script, `nodescaler list-gears ${nodeId}`.slice(0, 100));
      if (result.status !== 'Success') throw this.commandFailure(`list gears of ${nodeId}`, result);
      const parsed = parseGearListing(result.stdout);
      gears.push(...parsed.gears);
      if (parsed.next === undefined) return gears;
      offset = parsed.next;
    }
    throw new TransientError(`list gears of ${nodeId}: too many pages`);
  }

  /** One awaited SSM command running `NODE_FACTS_RUBY`; undefined when no district holds the node. */
  async readNodeFacts(nodeId: string): Promise<{ activeGears: number; maxActiveGears: number } | undefined> {
    checkNode(nodeId);
    const script = `oo-ruby -e ${shellQuote(NODE_FACTS_RUBY)} ${shellQuote(this.options.brokerDir)} ${shellQuote(nodeId)}`;
    const result = await this.runAwaited(script, `nodescaler node-facts ${nodeId}`.slice(0, 100));
    if (result.status !== 'Success') throw this.commandFailure(`node facts of ${nodeId}`, result);
    return parseNodeFacts(nodeId, result.stdout);
  }

  async deactivateNode(district: string, nodeId: string): Promise<void> {
    await this.district('deactivate-node', district, nodeId);
  }

  async activateNode(district: string, nodeId: string): Promise<void> {
    await this.district('activate-node', district, nodeId);
  }

  async addNode(district: string, nodeId: string): Promise<void> {
    await this.district('add-node', district, nodeId);
  }

  async removeNode(district: string, nodeId: string): Promise<void> {
    await this.district('remove-node', district, nodeId);
  }

  async startMove(gear: GearInfo, fromNode: string, toNode: string, options: MoveOptions = {}): Promise<MoveHandle> {
    checkNode(fromNode);
    checkNode(toNode);
    if (!SAFE_UUID.test(gear.uuid)) throw new ValidationError({ path: 'gear.uuid', message: 'must be letters, digits, "_" or "-"', value: gear.uuid });
    const comment = moveComment(gear.uuid, options.idempotencyKey);
    if (options.idempotencyKey !== undefined && options.mayExist) {
      const found = await this.findCommand(comment);
      if (found !== undefined) return { commandId: found };
    }
    const script = `oo-admin-move --gear_uuid ${shellQuote(gear.uuid)} -i ${shellQuote(toNode)} --json`;
    const commandId = await this.send(script, comment, this.options.commandTimeoutMs);
    return { commandId };
  }

  async moveStatus(handle: MoveHandle): Promise<MoveStatus> {
    const invocation = await this.invocation(handle.commandId);
    if (invocation === undefined || RUNNING.has(invocation.status)) return { state: 'running' };
    if (invocation.status !== 'Success') {
      const error = `oo-admin-move ${invocation.status}: ${firstLine(invocation.stderr) || invocation.details || 'no output'}`;
      return TARGET_FULL.test(invocation.stderr) ? { state: 'failed', error, targetFull: true } : { state: 'failed', error };
    }
    return parseMoveReport(invocation.stdout);
  }

  // -------------------------------------------------------------------------

  private async district(command: 'deactivate-node' | 'activate-node' | 'add-node' | 'remove-node', district: string, nodeId: string): Promise<void> {
    checkNode(nodeId);
    if (!SAFE_DISTRICT.test(district)) throw new ValidationError({ path: 'district', message: 'must be letters, digits, ".", "_" or "-"', value: district });
    const script = `oo-admin-ctl-district -c ${command} -n ${shellQuote(district)} -i ${shellQuote(nodeId)}`;
    const result = await this.runAwaited(script, `nodescaler ${command} ${nodeId}`.slice(0, 100));
    if (result.status === 'Success') return;
    const output = `${result.stdout}\n${result.stderr}`;
    if (result.status === 'Failed' && ALREADY.test(output)) return;
    if (result.status === 'Failed' && UNKNOWN.test(output)) {
      if (command === 'remove-node') return; // already gone from the district
      throw new NotFoundError('node in district', `${nodeId}@${district}`);
    }
    throw this.commandFailure(`${command} ${nodeId}`, result);
  }

  /** Sends a command and waits for its end; a command still running at the timeout is a TransientError. */
  private async runAwaited(script: string, comment: string): Promise<Invocation> {
    const commandId = await this.send(script, comment, this.syncTimeoutMs);
    const deadline = Date.now() + this.syncTimeoutMs;
    for (;;) {
      await this.sleep(this.pollIntervalMs);
      const invocation = await this.invocation(commandId);
      if (invocation !== undefined && !RUNNING.has(invocation.status)) return invocation;
      if (Date.now() >= deadline) throw new TransientError(`broker command ${commandId} (${comment}) did not finish within ${this.syncTimeoutMs} ms`);
    }
  }

  private async send(script: string, comment: string, timeoutMs: number): Promise<string> {
    try {
      const output = await this.client.send(
        new SendCommandCommand({
          InstanceIds: [this.options.brokerInstanceId],
          DocumentName: SHELL_DOCUMENT,
          Comment: comment,
          TimeoutSeconds: DELIVERY_TIMEOUT_SECONDS,
          Parameters: { commands: [script], executionTimeout: [String(Math.max(1, Math.ceil(timeoutMs / 1000)))] },
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
              { key: 'DocumentName', value: SHELL_DOCUMENT },
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

function checkNode(nodeId: string): void {
  if (!SAFE_NODE.test(nodeId)) throw new ValidationError({ path: 'nodeId', message: 'must be a host name: a-z, 0-9, ".", "_" and "-"', value: nodeId });
}

/** The Comment of a move command (at most 100 characters): the gear and a hash of the idempotency key. */
export function moveComment(uuid: string, idempotencyKey?: string): string {
  return `nodescaler move ${uuid.slice(0, 64)}${idempotencyKey === undefined ? '' : ` ${fnv1a64(idempotencyKey)}`}`;
}

/** The output of `NODE_FACTS_RUBY`: undefined for `UNKNOWN`; a missing or non-integer figure is a TransientError. */
export function parseNodeFacts(nodeId: string, stdout: string): { activeGears: number; maxActiveGears: number } | undefined {
  const lines = stdout.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  if (lines.includes('UNKNOWN')) return undefined;
  const line = lines.find((l) => l.startsWith('FACTS\t'));
  const fields = line?.split('\t') ?? [];
  const count = (text: string | undefined) => (text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined);
  const activeGears = count(fields[1]);
  const maxActiveGears = count(fields[2]);
  if (activeGears === undefined || maxActiveGears === undefined) {
    throw new TransientError(`node facts of ${nodeId}: the broker did not report gears_active_count and max_active_gears (${JSON.stringify(line ?? firstLine(stdout))})`);
  }
  return { activeGears, maxActiveGears };
}

/** Parses `LIST_GEARS_RUBY` output; a listing without its end line is a TransientError (cut short). */
export function parseGearListing(stdout: string): { gears: GearInfo[]; next?: number } {
  const gears: GearInfo[] = [];
  for (const raw of stdout.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line === '') continue;
    const fields = line.split('\t');
    if (fields[0] === 'GEAR' && fields.length === 4 && fields[1] && fields[2] && fields[3]) {
      gears.push({ uuid: fields[1], app: fields[2], size: fields[3] });
    } else if (fields[0] === 'NEXT' && /^\d+$/.test(fields[1] ?? '')) {
      return { gears, next: Number(fields[1]) };
    } else if (fields[0] === 'END' && /^\d+$/.test(fields[1] ?? '')) {
      return { gears };
    }
    // Anything else (Rails warnings on stdout) is ignored.
  }
  throw new TransientError('gear listing ended without its END line (output cut short or the script failed)');
}

/** Reads oo-admin-move's `--json` report: `{ "<uuid>": { "result": true|false, "message": ..., "destination": ... } }`. */
export function parseMoveReport(stdout: string): MoveStatus {
  const start = stdout.lastIndexOf('\n{');
  const text = (start >= 0 ? stdout.slice(start + 1) : stdout).trim();
  let report: unknown;
  try {
    report = JSON.parse(text);
  } catch {
    return { state: 'failed', error: `oo-admin-move printed no JSON report: ${firstLine(stdout) || 'no output'}` };
  }
  const entries = report !== null && typeof report === 'object' ? Object.values(report as Record<string, unknown>) : [];
  const entry = entries[0] as { result?: unknown; message?: unknown } | undefined;
  if (entry?.result === true) return { state: 'succeeded' };
  const message = typeof entry?.message === 'string' ? entry.message : 'move reported failed';
  return TARGET_FULL.test(message) ? { state: 'failed', error: message, targetFull: true } : { state: 'failed', error: message };
}

function firstLine(text: string): string {
  return (text.split('\n').find((line) => line.trim() !== '') ?? '').trim().slice(0, 300);
}

function errorName(error: unknown): string {
  return typeof error === 'object' && error !== null && typeof (error as { name?: unknown }).name === 'string' ? (error as { name: string }).name : '';
}

const CONFIGURATION = new Set(['AccessDeniedException', 'InvalidDocument', 'InvalidParameters', 'InvalidDocumentVersion', 'UnsupportedPlatformType', 'InvalidRole']);

/** An SSM SDK error as one of ours; ours pass through. */
export function translateSsmError(error: unknown, call: string): NodescalerError {
  if (error instanceof NodescalerError) return error;
  const name = errorName(error) || 'Error';
  const message = error instanceof Error && error.message ? `${name}: ${error.message}` : name;
  if (CONFIGURATION.has(name)) return new ValidationError({ path: 'platform', message: `SSM ${call} refused (${message})` });
  if (name === 'InvalidInstanceId') {
    return new TransientError(`SSM ${call}: the broker host is not reachable by SSM (stopped, or its agent is offline): ${message}`, { cause: error });
  }
  return new TransientError(`SSM ${call} failed: ${message}`, { cause: error });
}

/** The stage's broker (`platform.brokerInstanceId`) through SSM Run Command (the client is built here: see ec2CloudFor in lib/adapters/ec2/cloud.ts). */
export function openShiftBrokerPlatformFor(settings: Settings, clock: Clock): OpenShiftBrokerPlatform {
  const { platform } = settings.config;
  if (platform.brokerInstanceId === undefined) {
    throw new ValidationError({ path: 'platform.brokerInstanceId', message: 'platform openshift-broker needs brokerInstanceId' }, 'configuration');
  }
  return new OpenShiftBrokerPlatform(new SSMClient({ region: settings.deployment.region }), {
    brokerInstanceId: platform.brokerInstanceId,
    commandTimeoutMs: platform.commandTimeout,
    brokerDir: platform.brokerDir,
    clock,
  });
}
