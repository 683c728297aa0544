/**
 * A fake node host for the stats agent (infra/agent/nodescaler-agent.sh): an
 * OpenShift v2 gear tree and resource_limits.conf in a temp dir, a stub `aws`
 * first on PATH that records what it was asked to send, and a stub IMDSv2 on
 * 127.0.0.1. The agent runs for real with `sh`.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach } from 'vitest';

export const AGENT = join(resolve(import.meta.dirname, '../..'), 'infra/agent/nodescaler-agent.sh');
export const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/nodescaler-prod-stats';
export const TOKEN = 'imds-token-1';
export const INSTANCE_ID = 'i-0123456789abcdef0';

export const gearId = (n: number) => n.toString(16).padStart(32, '0');

export interface AgentRun {
  code: number | null;
  stderr: string;
}

export interface Imds {
  server: Server;
  endpoint: string;
  requests: Array<{ method: string; url: string; token?: string; ttl?: string }>;
}

/** IMDSv2: PUT /latest/api/token (with a TTL header) gives a token; metadata GETs need it. */
export async function startImds(): Promise<Imds> {
  const requests: Imds['requests'] = [];
  const server = createServer((req, res) => {
    const token = req.headers['x-aws-ec2-metadata-token'] as string | undefined;
    const ttl = req.headers['x-aws-ec2-metadata-token-ttl-seconds'] as string | undefined;
    requests.push({ method: req.method!, url: req.url!, ...(token !== undefined && { token }), ...(ttl !== undefined && { ttl }) });
    const send = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(body);
    };
    if (req.method === 'PUT' && req.url === '/latest/api/token') return ttl ? send(200, TOKEN) : send(400, 'missing ttl');
    if (req.method !== 'GET') return send(405, 'method not allowed');
    if (token !== TOKEN) return send(401, 'unauthorized');
    if (req.url === '/latest/meta-data/hostname') return send(200, 'Node-7.Example.com');
    if (req.url === '/latest/meta-data/instance-id') return send(200, INSTANCE_ID);
    return send(404, 'not found');
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** A gear as origin-server lays it out: `.env/` one file per variable, the state in app-root/runtime/.state. */
export interface FakeGear {
  /** app-root/runtime/.state; undefined: no state file (a gear being created counts as active). */
  state?: string;
  app?: string;
  /** Written as .env/OPENSHIFT_APP_DNS and (the gear's own) OPENSHIFT_GEAR_DNS. */
  appDns?: string;
  gearDns?: string;
  /** The head gear of a scaled application carries the haproxy cartridge. */
  haproxy?: boolean;
}

export class AgentNode {
  readonly dir = mkdtempSync(join(tmpdir(), 'nodescaler-agent-'));
  readonly gears = join(this.dir, 'var/lib/openshift');
  readonly limits = join(this.dir, 'etc/openshift/resource_limits.conf');
  readonly stub = join(this.dir, 'stub');
  readonly envFile = join(this.dir, 'agent.env');

  constructor(private readonly imds: Imds) {
    mkdirSync(this.stub);
    mkdirSync(this.gears, { recursive: true });
    mkdirSync(join(this.dir, 'etc/openshift'), { recursive: true });
    writeFileSync(this.limits, '# resource limits of a small node\n#max_active_gears=5\nnode_profile=small\nmax_active_gears = 100\nquota_files=80000\n');
    // `aws` stub: counts calls, fails the first STUB_FAILS, records the arguments and the body.
    const bin = join(this.dir, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'aws'),
      [
        '#!/bin/sh',
        'n=$(cat "$STUB_DIR/calls" 2>/dev/null || echo 0); n=$((n + 1)); echo "$n" > "$STUB_DIR/calls"',
        'if [ "$n" -le "${STUB_FAILS:-0}" ]; then echo "Could not connect to the endpoint URL" >&2; exit 255; fi',
        ': > "$STUB_DIR/args"',
        'while [ $# -gt 0 ]; do',
        '  printf "%s\\n" "$1" >> "$STUB_DIR/args"',
        '  if [ "$1" = --message-body ]; then printf "%s" "$2" > "$STUB_DIR/body.json"; fi',
        '  shift',
        'done',
        'echo \'{"MessageId": "m-1"}\'',
        '',
      ].join('\n'),
    );
    chmodSync(join(bin, 'aws'), 0o755);
    this.writeEnv({});
  }

  /** Gear `n`'s directory, with what `gear` gives (nothing else). */
  gear(n: number, gear: FakeGear): string {
    const home = join(this.gears, gearId(n));
    mkdirSync(join(home, 'app-root/runtime'), { recursive: true });
    mkdirSync(join(home, '.env'), { recursive: true });
    if (gear.state !== undefined) writeFileSync(join(home, 'app-root/runtime/.state'), `${gear.state}\n`);
    // origin-server writes each variable's value alone in its file, without a newline.
    if (gear.app !== undefined) writeFileSync(join(home, '.env/OPENSHIFT_APP_NAME'), gear.app);
    if (gear.appDns !== undefined) writeFileSync(join(home, '.env/OPENSHIFT_APP_DNS'), gear.appDns);
    if (gear.gearDns !== undefined) writeFileSync(join(home, '.env/OPENSHIFT_GEAR_DNS'), gear.gearDns);
    if (gear.haproxy) mkdirSync(join(home, 'haproxy'));
    return home;
  }

  /** A gear of `app` in namespace `ns`: the head gear (unscaled, or scaled with haproxy) or a secondary gear of a scaled app. */
  appGear(n: number, app: string, role: 'unscaled' | 'head' | 'secondary', state?: string): string {
    const appDns = `${app}-ns.example.com`;
    const gearDns = role === 'secondary' ? `${gearId(n)}-ns.example.com` : appDns;
    return this.gear(n, { ...(state !== undefined && { state }), app, appDns, gearDns, haproxy: role === 'head' });
  }

  writeEnv(over: Record<string, string | undefined>): void {
    const values: Record<string, string | undefined> = {
      NODESCALER_DISTRICT: 'd1',
      NODESCALER_PROFILE: 'small',
      NODESCALER_STATS_QUEUE_URL: QUEUE_URL,
      AWS_REGION: 'eu-west-1',
      GEAR_BASE_DIR: this.gears,
      RESOURCE_LIMITS: this.limits,
      IMDS_ENDPOINT: this.imds.endpoint,
      NODESCALER_RETRY_DELAY: '0',
      NODESCALER_SYSLOG: '0',
      NODESCALER_STATE_FILE: join(this.dir, 'state/agent.last'),
      ...over,
    };
    const lines = Object.entries(values)
      .filter(([, value]) => value !== undefined)
      .map(([name, value]) => `${name}='${value}'`);
    writeFileSync(this.envFile, `${lines.join('\n')}\n`);
  }

  run(extraEnv: Record<string, string> = {}, script = AGENT): Promise<AgentRun> {
    return new Promise((done, failed) => {
      const child = spawn('sh', [script], {
        env: {
          PATH: `${join(this.dir, 'bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
          HOME: this.dir,
          NODESCALER_AGENT_ENV: this.envFile,
          STUB_DIR: this.stub,
          ...extraEnv,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', failed);
      child.on('close', (code) => done({ code, stderr }));
    });
  }

  calls(): number {
    return existsSync(join(this.stub, 'calls')) ? Number(readFileSync(join(this.stub, 'calls'), 'utf8')) : 0;
  }

  sent(): string {
    return readFileSync(join(this.stub, 'body.json'), 'utf8');
  }

  args(): string[] {
    return readFileSync(join(this.stub, 'args'), 'utf8').trimEnd().split('\n');
  }
}

/**
 * For a describe block: a stub IMDSv2 started before its tests and closed after them, and a fresh AgentNode for each
 * test (set before the block's own beforeEach hooks run).
 */
export function useAgentNode(): { readonly imds: Imds; readonly node: AgentNode } {
  const fixture = {} as { imds: Imds; node: AgentNode };
  beforeAll(async () => {
    fixture.imds = await startImds();
  });
  afterAll(async () => {
    await new Promise((done) => fixture.imds.server.close(done));
  });
  beforeEach(() => {
    fixture.node = new AgentNode(fixture.imds);
  });
  return fixture;
}
