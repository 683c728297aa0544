/**
 * An OpenShift Origin broker behind SSM Run Command, in memory: the double
 * the broker adapter (lib/adapters/platform/openshift-broker.ts) talks to as
 * its SSMClient. It answers SendCommand / GetCommandInvocation / ListCommands
 * for the nodescaler document (infra/broker-document.yml, whose parameter
 * patterns it enforces as SSM does) and runs the actions as origin-server's
 * tools do (broker-util/oo-admin-ctl-district, oo-admin-move,
 * controller/app/models/district.rb, the mcollective proxy's move_gear):
 * the same messages, on stdout, the same exit codes; the district dump the
 * tool appends; the document's filtering of it; oo-admin-move's JSON report
 * (exit 1 for any failed gear, also after a move that completed but whose old
 * copy could not be removed); command latency on the injected clock (a command
 * is InProgress until it has run); and SSM's cut of StandardOutputContent at
 * 24,000 characters.
 */
import { GetCommandInvocationCommand, InvalidParameters, InvocationDoesNotExist, ListCommandsCommand, SendCommandCommand, type SSMClient } from '@aws-sdk/client-ssm';
import type { GearInfo } from '../../lib/domain/model.js';
import type { NodePlacement } from '../../lib/domain/placement.js';
import type { Clock } from '../../lib/ports/clock.js';
import { brokerDocument, frameDistrictOutput, frameMoveOutput } from './broker-document-frames.js';
import { DEFAULT_DISTRICT_UIDS, districtDump, type District } from './broker-district-dump.js';

export { DEFAULT_DISTRICT_UIDS };

export { brokerDocument, frameDistrictOutput, frameMoveOutput };

export const SSM_OUTPUT_LIMIT = 24_000;
/** How long a move waits for its application's lock before it gives up (Lock.run_in_app_lock: 10 tries, 5 s apart). */
export const APP_LOCK_WAIT_MS = 50_000;
/** oo-admin-move rescues NodeException and UserException only: LockUnavailableException ends it with Ruby's backtrace and no report. */
export const LOCK_UNAVAILABLE_OUTPUT = [
  "/var/www/openshift/broker/../../controller/app/models/lock.rb:66:in `run_in_app_lock': Unable to perform action on app object. Another operation is already running. (OpenShift::LockUnavailableException)",
  "\tfrom /opt/rh/ruby193/root/usr/share/gems/gems/openshift-origin-msg-broker-mcollective-1.35.4/lib/openshift/mcollective_application_container_proxy.rb:2019:in `move_gear_secure'",
  "\tfrom /opt/rh/ruby193/root/usr/share/gems/gems/openshift-origin-controller-1.38.4/app/models/gear.rb:394:in `move'",
  '\tfrom /usr/sbin/oo-admin-move:147:in `block in <main>\'',
  '\tfrom /usr/sbin/oo-admin-move:96:in `each\'',
  '\tfrom /usr/sbin/oo-admin-move:96:in `<main>\'',
  '',
].join('\n');
const metadata = { httpStatusCode: 400, attempts: 1, totalRetryDelay: 0 };

interface NodeHost {
  name: string;
  profile: string;
  maxGears: number;
  reachable: boolean;
  /** Gears being created here by a move in flight. */
  incoming: number;
}
interface Gear extends GearInfo {
  node: string;
}
/** How a move fails: rsync fails (gear left where it was), the old copy is not removed (moved, exit 1), the tool crashes, or another operation (a tenant's) holds the application's lock past the move's 50 s of tries. */
export type MoveFault = 'rsync' | 'destroy-old' | 'crash' | 'locked';
interface Command {
  id: string;
  parameters: Record<string, string>;
  comment: string;
  sentAt: number;
  runsAt: number;
  /** Set once it ran. */
  result?: { stdout: string; exitCode: number };
  /** A move's effect, applied when it runs; `locked`: it never got the application's lock (LockUnavailableException). */
  pendingMove?: { uuid: string; target: string; fault?: MoveFault; full: boolean; locked?: boolean };
}

export interface BrokerEmulatorOptions {
  clock: Clock;
  brokerInstanceId: string;
  documentName: string;
  /** How long a district command or query takes to run. Default 3 s. */
  commandLatencyMs?: number;
  /** How long oo-admin-move takes. Default 30 s. */
  moveDurationMs?: number;
  /** Drawn at the start of every move with no scripted fault: how it fails, if it does (the reliability suite's fault model). */
  drawMoveFault?: () => MoveFault | undefined;
}

export class BrokerEmulator {
  private readonly districts = new Map<string, District>();
  /** Regions (oo-admin-ctl-region -c create) and their zones (add-zone). */
  private readonly regions = new Map<string, Set<string>>();
  private readonly hosts = new Map<string, NodeHost>();
  private readonly gears = new Map<string, Gear>();
  private readonly commands = new Map<string, Command>();
  private readonly moveFaults = new Map<string, MoveFault>();
  /** Applications a tenant's operation holds locked, until when (ms). */
  private readonly tenantLocks = new Map<string, number>();
  private readonly document = brokerDocument();
  private sequence = 0;
  /** The gear of each completed move, in order, and whether its command still exited 1: what a check names when the drains' records disagree. */
  private readonly completedMoveGears: Array<{ uuid: string; exitedFailed: boolean }> = [];
  private lockedMoves = 0;
  private readonly latency: number;
  private readonly moveDuration: number;
  /** Every SendCommand input, in order, for assertions on the exact requests. */
  readonly sent: Array<{ DocumentName?: string; Parameters?: Record<string, string[]>; Comment?: string; InstanceIds?: string[] }> = [];

  constructor(private readonly options: BrokerEmulatorOptions) {
    this.latency = options.commandLatencyMs ?? 3_000;
    this.moveDuration = options.moveDurationMs ?? 30_000;
  }

  // -------------------------------------------------------------------------
  // The world (what an operator would have set up).

  createDistrict(name: string, gearSize: string, maxCapacity = DEFAULT_DISTRICT_UIDS): void {
    this.districts.set(name, { name, uuid: `${(this.districts.size + 1).toString(16).padStart(4, '0')}c0ffee${name.length}`, gearSize, maxCapacity, servers: [] });
  }

  /** `oo-admin-ctl-region -c create -r <region>` and `-c add-zone` for each zone, as set-up. */
  createRegion(name: string, zones: readonly string[]): void {
    this.regions.set(name, new Set(zones));
  }

  /** `oo-admin-ctl-district -c add-capacity -n <district> -s <uids>`, as set-up: more UIDs for the district. */
  addDistrictCapacity(name: string, uids: number): void {
    const district = this.districts.get(name);
    if (!district) throw new Error(`emulator set-up: no district ${name}`);
    district.maxCapacity += uids;
  }

  /** UIDs of the district no gear holds (available_capacity): the broker places no new gear in it at 0. */
  availableCapacity(name: string): number {
    this.settle();
    const district = this.districts.get(name);
    return district ? this.uidsLeft(district) : 0;
  }

  private uidsLeft(district: District): number {
    const members = new Set(district.servers.map((s) => s.name));
    let held = 0;
    for (const gear of this.gears.values()) if (members.has(gear.node)) held++;
    return district.maxCapacity - held;
  }

  /** A node host running its MCollective agent, in no district until add-node. */
  addNodeHost(name: string, profile: string, maxGears: number): void {
    this.hosts.set(name, { name, profile, maxGears, reachable: true, incoming: 0 });
  }

  /** Set-up shortcut: the node as an operator's add-node left it (active), in a region and zone when given. */
  joinDistrict(district: string, node: string, placement?: NodePlacement): void {
    const result = this.ctlDistrict('add-node', district, node, placement);
    if (result.exitCode !== 0) throw new Error(`emulator set-up: ${result.stdout}`);
  }

  placeGear(node: string, gear: GearInfo): void {
    this.gears.set(gear.uuid, { ...gear, node });
  }

  /** An application deleted a gear (wherever it is); true if it existed. */
  removeGear(uuid: string): boolean {
    this.settle();
    return this.gears.delete(uuid);
  }

  /** Every gear, by uuid, with its node: for the world's placement and invariant checks. */
  gearNodes(): ReadonlyMap<string, string> {
    this.settle();
    return new Map([...this.gears.values()].map((g) => [g.uuid, g.node]));
  }

  /** A node host's capacity and the gears being created on it, if the host exists. */
  host(node: string): { profile: string; maxGears: number; incoming: number } | undefined {
    this.settle();
    const host = this.hosts.get(node);
    return host && { profile: host.profile, maxGears: host.maxGears, incoming: host.incoming };
  }

  /** The nodes of a district, with whether each is active and its zone, if it has one. */
  servers(district: string): Array<{ name: string; active: boolean; region?: string; zone?: string }> {
    this.settle();
    return (this.districts.get(district)?.servers ?? []).map((s) => ({ name: s.name, active: s.active, ...(s.region !== undefined ? { region: s.region, zone: s.zone } : {}) }));
  }

  /** Moves that gave up on their application's lock (LockUnavailableException). */
  movesLockedOut(): number {
    return this.lockedMoves;
  }

  /** Moves that completed (the gear is on its target). */
  succeededMoves(): number {
    this.settle();
    return this.completedMoveGears.length;
  }

  /** The gear of each completed move, in order, and whether its command exited 1 all the same (its old copy not removed). */
  movedGears(): ReadonlyArray<{ uuid: string; exitedFailed: boolean }> {
    this.settle();
    return this.completedMoveGears;
  }

  unreachable(node: string): void {
    this.hosts.get(node)!.reachable = false;
  }

  /** A tenant's operation (a deploy, a scale event) holds the application's lock until `untilMs`. */
  holdAppLock(app: string, untilMs: number): void {
    this.tenantLocks.set(app, untilMs);
  }

  /** The next move of this gear fails in this way. */
  failNextMove(uuid: string, fault: MoveFault): void {
    this.moveFaults.set(uuid, fault);
  }

  whereIs(uuid: string): string | undefined {
    this.settle();
    return this.gears.get(uuid)?.node;
  }

  gearsOn(node: string): GearInfo[] {
    this.settle();
    return this.gearsAt(node);
  }

  private gearsAt(node: string): GearInfo[] {
    return [...this.gears.values()].filter((g) => g.node === node).map(({ uuid, app, size }) => ({ uuid, app, size }));
  }

  membership(node: string): { district: string; active: boolean; region?: string; zone?: string } | undefined {
    this.settle();
    return this.memberOf(node);
  }

  private memberOf(node: string): { district: string; active: boolean; region?: string; zone?: string } | undefined {
    for (const d of this.districts.values()) {
      const server = d.servers.find((s) => s.name === node);
      if (server) return { district: d.name, active: server.active, ...(server.region !== undefined ? { region: server.region, zone: server.zone! } : {}) };
    }
    return undefined;
  }

  // -------------------------------------------------------------------------
  // The tools, as origin-server prints them (everything on stdout).

  /** `oo-admin-ctl-district -c <command> -n <district> -i <node> [-r <region> -z <zone>]`: its raw stdout and exit code. */
  ctlDistrict(command: string, name: string, node: string, placement?: NodePlacement): { stdout: string; exitCode: number } {
    const district = this.districts.get(name);
    if (!district) {
      return command === 'add-node'
        ? { stdout: `District '${name}' not found, and no profile given to auto-create.\n`, exitCode: 1 }
        : { stdout: `District '${name}' not found.\n`, exitCode: 1 };
    }
    let result = '';
    let errors = '';
    let exitCode = 0;
    try {
      if (command === 'add-node') {
        const host = this.hosts.get(node);
        if (!host || !host.reachable) {
          errors += 'Cannot connect to node.\n';
          exitCode = 1;
        } else {
          this.addNode(district, host, placement);
          result += `Success for node '${node}'!\n`;
        }
      } else if (command === 'set-region') {
        if (!placement) return { stdout: `--region is required with command: ${command}\n`, exitCode: 1 };
        this.setRegion(district, node, placement);
        result += `Success for node '${node}'!\n`;
      } else {
        if (command === 'remove-node') this.removeNode(district, node);
        else if (command === 'deactivate-node') this.setActive(district, node, false);
        else if (command === 'activate-node') this.setActive(district, node, true);
        result += `Success for node '${node}'!\n`;
      }
    } catch (error) {
      errors += `Error for node '${node}': ${(error as Error).message}\n`;
      exitCode = 1;
    }
    result += `\n\n${districtDump(district, this.uidsLeft(district))}`;
    const stdout = `${result}\n` + (errors ? `ERROR OUTPUT:\n${errors}\n` : '');
    return { stdout, exitCode };
  }

  /** `oo-admin-ctl-district -c list` (no district named): every district's dump, or the hint when there is none. */
  listDistricts(): { stdout: string; exitCode: number } {
    if (this.districts.size === 0) return { stdout: "No districts created yet.  Use 'oo-admin-ctl-district -c create' to create one.\n", exitCode: 0 };
    const dumps = [...this.districts.values()].map((district) => `\n\n${districtDump(district, this.uidsLeft(district))}`).join('');
    return { stdout: `${dumps}\n`, exitCode: 0 };
  }

  /** district.rb's checks of a region and zone, in its words. */
  private checkPlacement(placement: NodePlacement): void {
    const zones = this.regions.get(placement.region);
    if (!zones) throw new Error(`Region object not found, you can create new region '${placement.region}' using oo-admin-ctl-region.`);
    if (!zones.has(placement.zone)) throw new Error(`Zone object not found, you can add zone '${placement.zone}' to region '${placement.region}' using oo-admin-ctl-region.`);
  }

  private setRegion(district: District, node: string, placement: NodePlacement): void {
    const server = district.servers.find((s) => s.name === node);
    if (!server) throw new Error(`Node with server identity: ${node} not found in district '${district.name}'.`);
    if (server.region !== undefined) throw new Error(`Node with server identity: ${node} has region: ${server.region}, zone: ${server.zone}, unset current region/zone and retry the operation.`);
    this.checkPlacement(placement);
    server.region = placement.region;
    server.zone = placement.zone;
  }

  private addNode(district: District, host: NodeHost, placement?: NodePlacement): void {
    const node = host.name;
    if (placement) this.checkPlacement(placement);
    if ([...this.districts.values()].some((d) => d.servers.some((s) => s.name === node))) {
      throw new Error(`Node with server identity: ${node} already belongs to another district`);
    }
    if ([...this.gears.values()].some((g) => g.node === node)) throw new Error(`Node with server identity: ${node} already has gears on it`);
    if (host.profile !== district.gearSize) {
      throw new Error(`Node with server identity: ${node} is of node profile '${host.profile}' and needs to be '${district.gearSize}' to add to district '${district.name}'`);
    }
    district.servers.push({ name: node, active: true, unresponsive: false, ...(placement ? { region: placement.region, zone: placement.zone } : {}) });
  }

  private removeNode(district: District, node: string): void {
    const server = district.servers.find((s) => s.name === node);
    if (!server) throw new Error(`Node with server identity: ${node} doesn't belong to district: ${district.uuid}`);
    if (server.active) throw new Error(`Node with server identity: ${node} from district: ${district.uuid} must be deactivated before it can be removed`);
    if ([...this.gears.values()].some((g) => g.node === node)) {
      throw new Error(`Node with server identity: ${node} could not be removed from district: ${district.uuid} because some apps in mongo are still using it.`);
    }
    district.servers = district.servers.filter((s) => s !== server);
  }

  private setActive(district: District, node: string, active: boolean): void {
    const server = district.servers.find((s) => s.name === node);
    if (!server) throw new Error(`Node with server identity: ${node} doesn't belong to district: ${district.uuid}`);
    if (!active && !server.active) throw new Error(`Node with server identity: ${node} is already deactivated`);
    if (active && server.active) throw new Error(`Node with server identity: ${node} is already active`);
    if (active && server.unresponsive) throw new Error(`Node with server identity: ${node} is unresponsive`);
    server.active = active;
  }

  /** When the lock of the gear's application is free: after the moves of its gears not yet run, and any tenant's hold. */
  private appLockFreeAt(uuid: string, now: number): number {
    const app = this.gears.get(uuid)?.app;
    if (app === undefined) return now;
    let freeAt = this.tenantLocks.get(app) ?? now;
    for (const command of this.commands.values()) {
      const move = command.pendingMove;
      if (move && !move.locked && command.result === undefined && this.gears.get(move.uuid)?.app === app) freeAt = Math.max(freeAt, command.runsAt);
    }
    return freeAt;
  }

  /** `oo-admin-move --gear_uuid <uuid> -i <target> --json`, decided at its start (the target's gear is created first). */
  private startAdminMove(uuid: string, target: string, locked: boolean): Command['pendingMove'] {
    const fault = locked ? undefined : (this.moveFaults.get(uuid) ?? this.options.drawMoveFault?.());
    if (!locked) this.moveFaults.delete(uuid);
    if (locked || fault === 'locked') {
      this.lockedMoves++;
      return { uuid, target, full: false, locked: true };
    }
    const host = this.hosts.get(target);
    const full = host !== undefined && this.gearsAt(target).length + host.incoming >= host.maxGears;
    if (host && !full && this.gears.has(uuid)) host.incoming++;
    return { uuid, target, full, ...(fault ? { fault } : {}) };
  }

  private finishAdminMove(move: NonNullable<Command['pendingMove']>): { stdout: string; exitCode: number } {
    const { uuid, target } = move;
    const gear = this.gears.get(uuid);
    if (!gear) return { stdout: `${JSON.stringify({ [uuid]: { result: false, message: `ERROR: Gear not found: ${uuid}` } })}\n`, exitCode: 1 };
    if (move.locked) return { stdout: LOCK_UNAVAILABLE_OUTPUT, exitCode: 1 };
    const host = this.hosts.get(target);
    if (host && !move.full) host.incoming--;
    const [app, domain] = gear.app.includes('-') ? [gear.app.slice(0, gear.app.lastIndexOf('-')), gear.app.slice(gear.app.lastIndexOf('-') + 1)] : [gear.app, 'ns'];
    const base = { login: `${domain}@example.com`, app_uuid: `app-${app}`, gear_uuid: uuid, app_name: app, app_domain: domain, destination: target, source: gear.node };
    const fail = (message: string) => ({ stdout: `${JSON.stringify({ [uuid]: { ...base, result: false, message, trace: TRACE } })}\n`, exitCode: 1 });
    if (move.fault === 'crash') {
      return { stdout: `/opt/rh/ruby193/root/usr/share/gems/gems/mongoid-3.1.6/lib/mongoid/sessions.rb:12: Could not connect to a primary node for replica set (Moped::Errors::ConnectionFailure)\n`, exitCode: 1 };
    }
    if (!host) return fail(`Node execution failure (invalid  node).  If the problem persists please contact Red Hat support.`);
    if (gear.node === target) return fail(`Error moving gear. Old and new servers are the same: ${target}`);
    const to = this.memberOf(target);
    if (!to) return fail('Error moving gear. Move gear only allowed from non-districted/districted node to districted node.');
    const from = this.memberOf(gear.node);
    if (from && from.region !== to.region) {
      return fail(`Error moving gear. Old and new servers must belong to the same region, source region: ${from.region ?? ''} destination region: ${to.region ?? ''}`);
    }
    if (move.full) return fail(`Gear creation failed.  The server ${target} that was chosen to run your gear has already exceeded its capacity.  Try your request again.`);
    if (move.fault === 'rsync') return fail(`Error moving app '${app}', platform 'linux', gear '${uuid}' from ${gear.node} to ${target}`);
    const source = gear.node;
    gear.node = target;
    this.completedMoveGears.push({ uuid, exitedFailed: move.fault === 'destroy-old' });
    if (move.fault === 'destroy-old') {
      return fail(`An invalid exit code (1) was returned from the server ${source}.  This indicates an unexpected problem during the execution of your request.`);
    }
    return { stdout: `${JSON.stringify({ [uuid]: { ...base, result: true, destination: target } })}\n`, exitCode: 0 };
  }

  // -------------------------------------------------------------------------
  // The document (infra/broker-document.yml): its framing of each action.

  private run(command: Command): { stdout: string; exitCode: number } {
    const p = command.parameters;
    const action = p.action!;
    switch (action) {
      case 'add-node':
      case 'set-region':
      case 'remove-node':
      case 'deactivate-node':
      case 'activate-node': {
        const placement = p.region !== undefined && p.region !== '-' ? { region: p.region, zone: p.zone! } : undefined;
        return frameDistrictOutput(this.ctlDistrict(action, p.district!, p.node!, placement));
      }
      case 'move': {
        return frameMoveOutput(this.finishAdminMove(command.pendingMove!));
      }
      case 'list-gears': {
        const rows = this.gearsAt(p.node!).map((g) => [g.uuid, g.app, g.size]).sort((a, b) => (a.join('\t') < b.join('\t') ? -1 : 1));
        const from = Number(p.offset ?? '0');
        const page = rows.slice(from, from + 150).map((r) => `GEAR\t${r.join('\t')}\n`).join('');
        return { stdout: page + (from + 150 < rows.length ? `NEXT\t${from + 150}\n` : `END\t${rows.length}\n`), exitCode: 0 };
      }
      case 'node-facts': {
        const host = this.hosts.get(p.node!);
        if (!this.memberOf(p.node!) || !host) return { stdout: 'UNKNOWN\n', exitCode: 0 };
        return { stdout: `FACTS\t${this.gearsAt(host.name).length}\t${host.maxGears}\n`, exitCode: 0 };
      }
      case 'node-district': {
        const m = this.memberOf(p.node!);
        return { stdout: m ? `DISTRICT\t${m.district}\t${m.active ? 'active' : 'inactive'}\t${m.region ?? '-'}\t${m.zone ?? '-'}\n` : 'NONE\n', exitCode: 0 };
      }
      case 'gear-location': {
        const at = this.gears.get(p.gear!)?.node;
        return { stdout: at ? `AT\t${at}\n` : 'NONE\n', exitCode: 0 };
      }
      default:
        throw new Error(`emulator: unknown action ${action}`);
    }
  }

  /** Runs every command whose time has come, in the order they run. */
  private settle(): void {
    const now = this.options.clock.now().getTime();
    const due = [...this.commands.values()].filter((c) => c.result === undefined && c.runsAt <= now).sort((a, b) => a.runsAt - b.runsAt || a.sentAt - b.sentAt);
    for (const command of due) command.result = this.run(command);
  }

  // -------------------------------------------------------------------------
  // SSM.

  /** The SSMClient the adapter is given. */
  client(): SSMClient {
    return { send: (command: unknown) => this.handle(command) } as unknown as SSMClient;
  }

  private async handle(command: unknown): Promise<unknown> {
    if (command instanceof SendCommandCommand) return this.sendCommand(command.input);
    if (command instanceof GetCommandInvocationCommand) return this.getInvocation(command.input);
    if (command instanceof ListCommandsCommand) return this.listCommands(command.input);
    throw new Error(`emulator: SSM call not emulated: ${(command as object).constructor.name}`);
  }

  private sendCommand(input: SendCommandCommand['input']) {
    this.sent.push({ DocumentName: input.DocumentName, Parameters: input.Parameters, Comment: input.Comment, InstanceIds: input.InstanceIds });
    const refuse = (message: string) => {
      throw new InvalidParameters({ message, $metadata: metadata });
    };
    if (input.DocumentName !== this.options.documentName) refuse(`document ${input.DocumentName} is not the nodescaler document`);
    if (JSON.stringify(input.InstanceIds) !== JSON.stringify([this.options.brokerInstanceId])) refuse(`instances ${JSON.stringify(input.InstanceIds)}`);
    const parameters: Record<string, string> = {};
    for (const [name, definition] of Object.entries(this.document.parameters)) {
      const given = input.Parameters?.[name];
      if (given !== undefined && given.length !== 1) refuse(`parameter ${name} takes one value`);
      const value = given?.[0] ?? definition.default;
      if (value === undefined) refuse(`parameter ${name} is required`);
      if (definition.allowedValues && !definition.allowedValues.includes(value!)) refuse(`parameter ${name}: ${value} is not an allowed value`);
      if (definition.allowedPattern && !new RegExp(definition.allowedPattern).test(value!)) refuse(`parameter ${name}: ${value} does not match ${definition.allowedPattern}`);
      parameters[name] = value!;
    }
    for (const name of Object.keys(input.Parameters ?? {})) if (!(name in this.document.parameters)) refuse(`unknown parameter ${name}`);
    const now = this.options.clock.now().getTime();
    const id = `0b${(++this.sequence).toString(16).padStart(6, '0')}-emulated`;
    const isMove = parameters.action === 'move';
    const record: Command = { id, parameters, comment: input.Comment ?? '', sentAt: now, runsAt: now + (isMove ? this.moveDuration : this.latency) };
    this.settle();
    if (isMove) {
      // origin-server runs a move in the application's lock (Lock.run_in_app_lock: 10 tries, 5 s apart): it starts when
      // the lock frees within those 50 s, else it fails then.
      const freeAt = this.appLockFreeAt(parameters.gear!, now);
      record.pendingMove = this.startAdminMove(parameters.gear!, parameters.node!, freeAt - now > APP_LOCK_WAIT_MS);
      record.runsAt = record.pendingMove!.locked ? now + APP_LOCK_WAIT_MS : Math.max(now, freeAt) + this.moveDuration;
    }
    this.commands.set(id, record);
    return { Command: { CommandId: id, DocumentName: input.DocumentName, Comment: input.Comment, Parameters: input.Parameters, Status: 'Pending' } };
  }

  private getInvocation(input: GetCommandInvocationCommand['input']) {
    this.settle();
    const command = this.commands.get(input.CommandId ?? '');
    const now = this.options.clock.now().getTime();
    // SSM does not know an invocation in the first moments after SendCommand.
    if (!command || input.InstanceId !== this.options.brokerInstanceId || now === command.sentAt) {
      throw new InvocationDoesNotExist({ message: 'InvocationDoesNotExist', $metadata: metadata });
    }
    if (!command.result) return { CommandId: command.id, InstanceId: input.InstanceId, Status: 'InProgress', StandardOutputContent: '', StandardErrorContent: '' };
    return {
      CommandId: command.id,
      InstanceId: input.InstanceId,
      Status: command.result.exitCode === 0 ? 'Success' : 'Failed',
      StatusDetails: command.result.exitCode === 0 ? 'Success' : 'Failed',
      ResponseCode: command.result.exitCode,
      StandardOutputContent: command.result.stdout.slice(0, SSM_OUTPUT_LIMIT),
      StandardErrorContent: command.result.exitCode === 0 ? '' : `failed to run commands: exit status ${command.result.exitCode}`,
    };
  }

  private listCommands(input: ListCommandsCommand['input']) {
    this.settle();
    if (input.CommandId !== undefined) {
      const command = this.commands.get(input.CommandId);
      return { Commands: command ? [this.described(command)] : [] };
    }
    const after = input.Filters?.find((f) => f.key === 'InvokedAfter')?.value;
    const document = input.Filters?.find((f) => f.key === 'DocumentName')?.value;
    const found = [...this.commands.values()]
      .filter((c) => (after === undefined || c.sentAt >= Date.parse(after)) && (document === undefined || document === this.options.documentName))
      .sort((a, b) => b.sentAt - a.sentAt);
    const start = Number(input.NextToken ?? '0');
    const size = input.MaxResults ?? 50;
    const page = found.slice(start, start + size);
    return { Commands: page.map((c) => this.described(c)), ...(start + size < found.length ? { NextToken: String(start + size) } : {}) };
  }

  private described(command: Command) {
    return {
      CommandId: command.id,
      DocumentName: this.options.documentName,
      Comment: command.comment,
      Parameters: Object.fromEntries(Object.entries(command.parameters).map(([k, v]) => [k, [v]])),
    };
  }
}

/** A Ruby backtrace as oo-admin-move puts in a failed report's `trace` (its length matters: SSM keeps 24,000 characters). */
const TRACE = Array.from(
  { length: 40 },
  (_, i) => `/opt/rh/ruby193/root/usr/share/gems/gems/openshift-origin-msg-broker-mcollective-1.36.2/lib/openshift/mcollective_application_container_proxy.rb:${2400 + i}:in \`move_gear'`,
);
