/**
 * The broker's REST side over the broker emulator: tenants create
 * applications and scale them up; the broker places each new gear on the
 * least-loaded active node of a district of its gear size that has room (the
 * real broker draws among the emptier ones, lib/adapters/local/broker-placement.ts;
 * these tests read only whether there is room: rpc_find_all_available, only nodes under 100 % of
 * active capacity, and only in a district with a UID left:
 * `district.available_capacity > 0`), or refuses it with
 * NodeUnavailableException ("No nodes available for the specified gear
 * size", exit code 140), the same words for either cause; when the broker
 * requires zones, a node in no zone is skipped and the words end "gear
 * size/zone combination". Either way it
 * writes the request's line to the user action log exactly as
 * OpenShift::UserActionLog.action does, through Ruby's Logger (its default
 * format, the description cut to its first line): the file the broker
 * reporter (infra/agent/nodescaler-broker-reporter.sh) reads.
 */
import { appendFileSync, existsSync, writeFileSync } from 'node:fs';
import type { Clock } from '../../lib/ports/clock.js';
import type { BrokerEmulator } from './broker-emulator.js';

export interface BrokerRequest {
  login: string;
  domain: string;
  app: string;
  gearSize: string;
  /** A scale-up event of an existing application (ACTION=SCALE_UP, its APP_UUID logged); else an application create. */
  scaleUp?: boolean;
}

export class BrokerUserActions {
  private requests = 0;
  private gears = 0;

  constructor(
    private readonly broker: BrokerEmulator,
    /** The broker's districts and their gear size (what `oo-admin-ctl-district` created). */
    private readonly districts: ReadonlyArray<{ name: string; gearSize: string }>,
    private readonly logFile: string,
    private readonly clock: Clock,
    /** The broker requires a zone for app creation (REGIONS_REQUIRE_ZONE_FOR_APP_CREATE): a node in no zone takes no new gear. */
    private readonly requireZones = false,
  ) {
    if (!existsSync(logFile)) writeFileSync(logFile, `# Logfile created on ${clock.now().toISOString()} by logger.rb/v1.5.0\n`);
  }

  /** One request: the node the gear went to, or undefined when the broker refused it (and logged the refusal). */
  create(request: BrokerRequest): string | undefined {
    this.requests += 1;
    const node = this.findAvailable(request.gearSize);
    const action = request.scaleUp ? 'SCALE_UP' : 'ADD_APPLICATION';
    const args = `${request.scaleUp ? ` APP_UUID=${appUuid(request)}` : ''} DOMAIN=${request.domain}`;
    if (node === undefined) {
      const what = this.requireZones ? 'gear size/zone combination' : 'gear size';
      this.write('FAILURE', 'internal_server_error', action, request, args,
        `Unable to complete the requested operation due to: No nodes available for the specified ${what}.  Please try again and contact support if the issue persists. `);
      return undefined;
    }
    this.gears += 1;
    this.broker.placeGear(node, { uuid: this.gears.toString(16).padStart(32, '0'), app: request.app, size: request.gearSize });
    this.write('SUCCESS', request.scaleUp ? 'ok' : 'created', action, request, args, request.scaleUp ? `Application event 'scale-up' successful` : `Application ${request.app} was created.`);
    return node;
  }

  /** Another kind of failure, as a check that only capacity refusals count. */
  failOther(request: BrokerRequest, description: string): void {
    this.requests += 1;
    this.write('FAILURE', 'unprocessable_entity', 'ADD_APPLICATION', request, ` DOMAIN=${request.domain}`, description);
  }

  private findAvailable(gearSize: string): string | undefined {
    let best: { name: string; load: number } | undefined;
    for (const district of this.districts) {
      if (district.gearSize !== gearSize || this.broker.availableCapacity(district.name) <= 0) continue;
      for (const server of this.broker.servers(district.name)) {
        const host = this.broker.host(server.name);
        if (!server.active || host === undefined || (this.requireZones && server.zone === undefined)) continue;
        const used = this.broker.gearsOn(server.name).length + host.incoming;
        if (used >= host.maxGears) continue;
        const load = used / host.maxGears;
        if (best === undefined || load < best.load) best = { name: server.name, load };
      }
    }
    return best?.name;
  }

  private write(result: string, status: string, action: string, request: BrokerRequest, args: string, description: string): void {
    const now = this.clock.now();
    const iso = now.toISOString();
    const date = iso.slice(0, 10);
    const time = iso.slice(11, 19);
    const reqId = `req-${this.requests.toString(16).padStart(8, '0')}`;
    const message =
      `RESULT=${result} STATUS=${status} TIMESTAMP=${Math.floor(now.getTime() / 1000)} DATE=${date} TIME=${time} ACTION=${action} REQ_ID=${reqId}` +
      ` USER_ID=${request.login.length.toString(16).padStart(24, '0')} LOGIN=${request.login}${args} ${description.split('\n')[0]!.trim()}`;
    // Ruby's Logger: "I, [2026-03-01T12:00:00.000000 #4242]  INFO -- : message"
    appendFileSync(this.logFile, `I, [${iso.slice(0, 23)}000 #4242]  INFO -- : ${message}\n`);
  }
}

function appUuid(request: BrokerRequest): string {
  return Buffer.from(`${request.domain}-${request.app}`).toString('hex').padEnd(24, '0').slice(0, 24);
}
