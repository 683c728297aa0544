/**
 * A small `Platform` for the provisioner and decommissioner tests: nodes
 * hold gear lists that a test sets, every call is recorded, and a call can
 * be made to fail once. Moves are not its business (the gear-mover tests use
 * the simulated platform).
 */
import type { GearInfo } from '../../lib/domain/model.js';
import { NotFoundError, type NodescalerError } from '../../lib/errors.js';
import type { MoveHandle, MoveStatus, Platform } from '../../lib/ports/platform.js';

type Call = { op: 'listGears' | 'deactivateNode' | 'activateNode' | 'addNode' | 'removeNode'; nodeId: string; district?: string };

export class FakePlatform implements Platform {
  readonly calls: Call[] = [];
  /** Gears per node; a node absent here is unknown (`NotFoundError`) unless it is in `districts`. */
  readonly gears = new Map<string, GearInfo[]>();
  /** Node -> district, for nodes added and not removed. */
  readonly districts = new Map<string, string>();
  readonly inactive = new Set<string>();
  private readonly failures = new Map<Call['op'], NodescalerError[]>();

  node(nodeId: string, district: string, gears: GearInfo[] = []): this {
    this.districts.set(nodeId, district);
    this.gears.set(nodeId, gears);
    return this;
  }

  failNext(op: Call['op'], error: NodescalerError): void {
    this.failures.set(op, [...(this.failures.get(op) ?? []), error]);
  }

  async listGears(nodeId: string): Promise<GearInfo[]> {
    this.enter({ op: 'listGears', nodeId });
    const gears = this.gears.get(nodeId);
    if (!gears && !this.districts.has(nodeId)) throw new NotFoundError('node', nodeId);
    return [...(gears ?? [])];
  }

  async deactivateNode(district: string, nodeId: string): Promise<void> {
    this.enter({ op: 'deactivateNode', nodeId, district });
    this.inactive.add(nodeId);
  }

  async activateNode(district: string, nodeId: string): Promise<void> {
    this.enter({ op: 'activateNode', nodeId, district });
    this.inactive.delete(nodeId);
  }

  async addNode(district: string, nodeId: string): Promise<void> {
    this.enter({ op: 'addNode', nodeId, district });
    this.districts.set(nodeId, district);
    if (!this.gears.has(nodeId)) this.gears.set(nodeId, []);
  }

  async removeNode(district: string, nodeId: string): Promise<void> {
    this.enter({ op: 'removeNode', nodeId, district });
    if (!this.districts.has(nodeId)) throw new NotFoundError('node', nodeId);
    this.districts.delete(nodeId);
    this.gears.delete(nodeId);
  }

  async startMove(): Promise<MoveHandle> {
    throw new Error('FakePlatform does not move gears');
  }

  async moveStatus(): Promise<MoveStatus> {
    throw new Error('FakePlatform does not move gears');
  }

  async findMove(): Promise<MoveHandle | undefined> {
    throw new Error('FakePlatform does not move gears');
  }

  ops(op?: Call['op']): Call[] {
    return op === undefined ? this.calls : this.calls.filter((call) => call.op === op);
  }

  private enter(call: Call): void {
    this.calls.push(call);
    const error = this.failures.get(call.op)?.shift();
    if (error) throw error;
  }
}
