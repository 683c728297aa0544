/**
 * `nodescaler`: the operator CLI. bin/nodescaler.mjs bundles this file on
 * demand (esbuild) and calls `cli`. See USAGE below, and lib/cli/exit.ts for
 * the exit codes.
 *
 * Everything it needs from the environment comes through lib/config
 * (`loadCliEnvironmentFromProcess`); `main` itself takes the arguments, the
 * environment and the output streams, so it runs the same in a test.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadCliEnvironmentFromProcess, readConfigFile, type CliEnvironment } from '../config/index.js';
import { deploymentIssues } from '../config/consistency.js';
import { configWarnings } from '../config/warnings.js';
import { formatValue, NodescalerError, NotFoundError, ValidationError, ConflictError } from '../errors.js';
import { OPTIONS, print, widthOf, type Context, type Io, type OptionName, type Values } from './context.js';
import { CliError, EXIT, usageError, type ExitCode } from './exit.js';
import { Style, plural, wrap } from './render.js';
import { closestName } from './suggest.js';

export type { Io } from './context.js';

export const USAGE = `usage: nodescaler <command> [arguments] [options]

commands
  status [POOL]              pools: nodes by state, utilization, limits, action in flight,
                             what blocks it until when, drains with each gear's move
                             --watch [--interval 5s] [--iterations N]  refresh until Ctrl-C
                             --all                     every gear of every drain, and the pools the
                                                       configuration lacks (adopted nodes)
  explain [POOL]             why a pool does or does not scale: the evaluator's rules on the
                             current state (every condition, refused candidates) and the
                             latest decision log entries   --limit N (default 10)
  evaluate --dry-run [POOL]  what the evaluator would decide now for every pool; writes nothing
  drain NODE                 drain a node by hand: a scale-down for the gear mover   --reason TEXT
                             refused (exit 4) when its gears do not fit on the other nodes;
                             --replace: request a replacement node first, drain once it joined
  cancel-drain NODE          stop a node's drain: moves in flight settle, the node re-opens;
                             one not begun yet never begins   --reason TEXT
  protect NODE               never choose the node for scale-down, never terminate it
                             --reason TEXT
  unprotect NODE             clear the node's protected flag   --reason TEXT
  forget NODE                drop an adopted node of a pool the configuration lacks from the
                             state (status --all lists them); its host is not touched   --reason TEXT
  pause [POOL]               hold scaling back (every pool without POOL), no deploy
                             --reason TEXT
                             --scale-up | --scale-down  only that action   --until TIME|DURATION
  resume [POOL]              lift a pause   --reason TEXT   [--scale-up | --scale-down]
  set POOL KEY VALUE         runtime override, validated as the file: min, max, mode
                             (active|shadow), protectedNodes (a,b), scaleUp.threshold,
                             scaleUp.target, scaleDown.utilizationThreshold, scaleDown.enabled
                             --reason TEXT
  unset POOL KEY             back to the file's value   --reason TEXT
  overrides [POOL]           the runtime overrides, with the file's values, version, who and why
  shadow-report              what shadow mode would have done: nodes added, drains, gear moves,
                             node-hours saved   --since DURATION|TIME (default 1d)
  audit [POOL]               operator actions with who, when and why   --since (default 7d)
  disruption [POOL]          what the drains cost the tenants: drains by cause and outcome, gears
                             moved, tenant restarts, the applications moved most
                             --since DURATION|TIME (default 7d)   --limit N applications (default 10)
                             --app NAME                every move of that application: when, from and
                                                       to which node, why, whether it restarted it
  report-stats               where no agent runs on the nodes: each known node's figures read
                             from the platform (broker), one node-stats each to the stats queue;
                             one-shot, run it every minute from cron or an EventBridge schedule
                             --pool POOL               only that pool
  validate-config FILE       check a configuration file; every problem is listed

target (default: the local state, unless AWS settings are in the environment)
  --local                    the local embedded state of npm run invoke (.nodescaler/)
  --state-dir DIR            another local state directory (implies --local)
  --stage STAGE              the deployed stage: table nodescaler-STAGE-state,
                             queue nodescaler-STAGE-drain.fifo (AWS credentials from the SDK chain)
  --region REGION            its region (default AWS_REGION, else us-east-1)
  --table NAME               another table name
  --config FILE              the configuration (default: infra/nodescaler.example.yml for the
                             local state, config/STAGE.yml for a stage)
  --at TIME                  evaluate as of this ISO time (a local state built with --at)

output
  --json                     machine-readable output
  --color / --no-color       colour; default: only on a terminal, never with NO_COLOR set
  -h, --help, help           this text (through npx: npx nodescaler help)
  --version, version         the version

exit codes
  0 ok · 1 error · 2 invalid input (usage, invalid configuration) · 3 not found (node, pool,
  state) · 4 refused (the request does not fit the node's or pool's state; nothing changed)
`;


const TARGET_OPTIONS: OptionName[] = ['local', 'state-dir', 'stage', 'region', 'table', 'config', 'at'];
const OUTPUT_OPTIONS: OptionName[] = ['json', 'color', 'no-color', 'help', 'version'];

interface CommandSpec {
  /** Positional arguments: [required, optional]. */
  args: { required: string[]; optional: string[] };
  options: OptionName[];
}

const COMMANDS: Record<string, CommandSpec> = {
  status: { args: { required: [], optional: ['POOL'] }, options: [...TARGET_OPTIONS, 'watch', 'interval', 'iterations', 'all'] },
  explain: { args: { required: [], optional: ['POOL'] }, options: [...TARGET_OPTIONS, 'limit'] },
  evaluate: { args: { required: [], optional: ['POOL'] }, options: [...TARGET_OPTIONS, 'dry-run'] },
  drain: { args: { required: ['NODE'], optional: [] }, options: [...TARGET_OPTIONS, 'reason', 'replace'] },
  'cancel-drain': { args: { required: ['NODE'], optional: [] }, options: [...TARGET_OPTIONS, 'reason'] },
  protect: { args: { required: ['NODE'], optional: [] }, options: [...TARGET_OPTIONS, 'reason'] },
  unprotect: { args: { required: ['NODE'], optional: [] }, options: [...TARGET_OPTIONS, 'reason'] },
  forget: { args: { required: ['NODE'], optional: [] }, options: [...TARGET_OPTIONS, 'reason'] },
  pause: { args: { required: [], optional: ['POOL'] }, options: [...TARGET_OPTIONS, 'reason', 'until', 'scale-up', 'scale-down'] },
  resume: { args: { required: [], optional: ['POOL'] }, options: [...TARGET_OPTIONS, 'reason', 'scale-up', 'scale-down'] },
  set: { args: { required: ['POOL', 'KEY', 'VALUE'], optional: [] }, options: [...TARGET_OPTIONS, 'reason'] },
  unset: { args: { required: ['POOL', 'KEY'], optional: [] }, options: [...TARGET_OPTIONS, 'reason'] },
  overrides: { args: { required: [], optional: ['POOL'] }, options: TARGET_OPTIONS },
  'shadow-report': { args: { required: [], optional: [] }, options: [...TARGET_OPTIONS, 'since'] },
  audit: { args: { required: [], optional: ['POOL'] }, options: [...TARGET_OPTIONS, 'since'] },
  disruption: { args: { required: [], optional: ['POOL'] }, options: [...TARGET_OPTIONS, 'since', 'limit', 'app'] },
  'report-stats': { args: { required: [], optional: [] }, options: [...TARGET_OPTIONS, 'pool'] },
  'validate-config': { args: { required: ['FILE'], optional: [] }, options: [] },
};

/** Runs one command line; the exit code. Never throws. */
export async function main(argv: readonly string[], io: Io): Promise<ExitCode> {
  let values: Values = {};
  // The command as typed, for the usage printed under an error (known before parsing succeeds).
  let command: string | undefined = argv.find((arg) => !arg.startsWith('-') && COMMANDS[arg] !== undefined);
  try {
    const parsed = parseOptions(argv, command);
    values = parsed.values as Values;
    const style = new Style(colourWanted(values, io));
    const [typed, ...args] = parsed.positionals;
    command = typed;
    // `help` and `version` as commands too: `npx nodescaler --help` is npx's own help.
    if (values.version || command === 'version') {
      io.stdout.write(`nodescaler ${version(io.root)}\n`);
      return EXIT.ok;
    }
    if (values.help || command === 'help') {
      io.stdout.write(USAGE);
      return EXIT.ok;
    }
    if (command === undefined) throw usageError('no command given');
    const spec = COMMANDS[command];
    if (!spec) {
      const near = closestName(command, Object.keys(COMMANDS));
      command = undefined;
      throw usageError(`unknown command ${JSON.stringify(typed)}`, near ? `did you mean ${near}?` : undefined);
    }
    for (const name of Object.keys(values) as OptionName[]) {
      if (!spec.options.includes(name) && !OUTPUT_OPTIONS.includes(name)) {
        const near = closestName(name, [...spec.options, ...OUTPUT_OPTIONS].filter((option) => option !== name));
        throw usageError(`${command} takes no --${name}`, near ? `did you mean --${near}?` : undefined);
      }
    }
    if (args.length < spec.args.required.length) throw usageError(`${command} needs ${spec.args.required.join(' ')}`);
    if (args.length > spec.args.required.length + spec.args.optional.length) throw usageError(`${command}: unexpected argument ${JSON.stringify(args.at(-1))}`);
    const context: Context = { io, values, style, width: widthOf(io) };
    if (command === 'validate-config') return validateConfig(args[0]!, context);
    // The state commands bring the AWS SDK and dynalite: loaded only when one runs.
    const { runStateCommand } = await import('./commands.js');
    return await runStateCommand(command, args, context);
  } catch (error) {
    return report(error, io, new Style(colourWanted(values, io, io.stderr)), command);
  }
}

/** parseArgs, with an unknown option named and the closest known one offered (the command's first). */
function parseOptions(argv: readonly string[], command: string | undefined) {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const unknown = /^Unknown option '(-{1,2})([^']*)'/.exec((error as Error).message);
    if ((error as { code?: string }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION' || !unknown) throw error;
    const own = command ? COMMANDS[command]!.options : [];
    const near = closestName(unknown[2]!, command ? [...own, ...OUTPUT_OPTIONS] : Object.keys(OPTIONS));
    throw usageError(`unknown option ${unknown[1]}${unknown[2]}`, near ? `did you mean --${near}?` : undefined);
  }
}

/** The lines of USAGE about one command (its line and the option lines under it). */
export function commandUsage(command: string): string[] {
  const lines = USAGE.split('\n');
  const start = lines.findIndex((line) => line.startsWith(`  ${command} `) || line === `  ${command}`);
  if (start < 0) return [];
  const block = [lines[start]!];
  for (const line of lines.slice(start + 1)) {
    if (!/^ {4,}/.test(line)) break;
    block.push(line);
  }
  return block;
}

function validateConfig(file: string, context: Context): ExitCode {
  const { io, values, style: s } = context;
  try {
    const config = readConfigFile(resolve(io.cwd, file));
    const deployment = deploymentIssues(config);
    if (deployment.length > 0) throw new ValidationError(deployment, `configuration ${file}`);
    const warnings = configWarnings(config);
    const summary = { file, valid: true, handler: config.handler, platform: config.platform.kind, pools: config.pools.map((p) => `${p.district}/${p.profile}`), warnings };
    print(context, summary, () => [`${s.green('valid')}: ${file} · handler ${config.handler} · platform ${config.platform.kind} · ${plural(config.pools.length, 'pool')}: ${summary.pools.join(', ')}`]);
    // Valid all the same: a script reading stdout or the exit code sees a valid file.
    if (!values.json && warnings.length > 0) io.stderr.write(`${warnings.flatMap((warning) => wrap(`${s.yellow('warning')}: ${warning}`, context.width)).join('\n')}\n`);
    return EXIT.ok;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    if (values.json) {
      io.stdout.write(`${JSON.stringify({ file, valid: false, issues: error.issues }, null, 2)}\n`);
    } else {
      const lines = [`${s.red('invalid')}: ${file}: ${plural(error.issues.length, 'problem')}`];
      for (const issue of error.issues) {
        const where = issue.path === '' ? '(file)' : issue.path;
        const found = 'value' in issue ? ` (got ${formatValue(issue.value)})` : '';
        lines.push(...wrap(`${s.bold(where)}: ${issue.message}${found}`, context.width, '  - '));
      }
      io.stderr.write(`${lines.join('\n')}\n`);
    }
    return EXIT.usage;
  }
}

/** The message and exit code of a failure: our errors by kind, AWS's by name, anything else as an error (1). */
function report(error: unknown, io: Io, s: Style, command?: string): ExitCode {
  let code: ExitCode = EXIT.error;
  let message: string;
  let hint: string | undefined;
  if (error instanceof CliError) {
    code = error.exitCode;
    message = error.message;
    hint = error.hint;
  } else if (error instanceof ValidationError) {
    code = EXIT.usage;
    message = error.message;
  } else if (error instanceof NotFoundError) {
    code = EXIT.notFound;
    message = error.kind === 'table' ? `table ${error.id} not found` : error.message;
    if (error.kind === 'table') hint = 'is the stage deployed in this region? (--stage, --region, --table)';
  } else if (error instanceof ConflictError) {
    code = EXIT.refused;
    message = `${error.message} (changed by someone else at the same time; nothing written: run the command again)`;
  } else if (isParseArgsError(error)) {
    code = EXIT.usage;
    message = (error as Error).message;
  } else {
    const name = awsErrorName(error);
    message = error instanceof Error ? error.message : String(error);
    if (name === 'CredentialsProviderError' || /credential/i.test(message)) {
      hint = 'no AWS credentials found: set AWS_PROFILE (or the AWS_ACCESS_KEY_ID pair), or use --local for the local state';
    } else if (name === 'AccessDeniedException' || name === 'AccessDenied') {
      hint = 'the credentials may not read or write the state table / send to the drain queue';
    } else if (!(error instanceof NodescalerError) && error instanceof Error && error.stack && !name) {
      hint = error.stack.split('\n').slice(1, 3).join('\n').trim();
    }
  }
  io.stderr.write(`${s.red('nodescaler: error:')} ${message}\n`);
  if (hint) io.stderr.write(`${hint}\n`);
  if (code === EXIT.usage && !(error instanceof ValidationError)) {
    const own = command ? commandUsage(command) : [];
    if (own.length > 0) io.stderr.write(`\nusage: nodescaler ${command} ...\n${own.join('\n')}\n(nodescaler --help lists every command and option)\n`);
    else io.stderr.write(`\n${USAGE.slice(0, USAGE.indexOf('\n\ntarget'))}\n(nodescaler --help lists every option)\n`);
  }
  return code;
}

function isParseArgsError(error: unknown): boolean {
  const code = (error as { code?: string }).code;
  return typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS');
}

function awsErrorName(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const name = (e as { name?: string }).name;
    if (name && name !== 'Error' && name !== 'TransientError') return name;
  }
  return undefined;
}

function colourWanted(values: Values, io: Io, stream: { isTTY?: boolean } = io.stdout): boolean {
  if (values['no-color']) return false;
  if (values.color) return true;
  if (io.env.noColor) return false;
  if (io.env.forceColor) return true;
  return stream.isTTY === true;
}


function version(root: string): string {
  try {
    return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * The process entry (bin/nodescaler.mjs): the environment through lib/config,
 * the real streams, and Ctrl-C for --watch (the first one ends the wait
 * between two refreshes, exit 0; a second one exits at once).
 */
export async function cli(argv: readonly string[], root: string): Promise<ExitCode> {
  let env: CliEnvironment;
  try {
    env = loadCliEnvironmentFromProcess();
  } catch (error) {
    return report(error, { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd(), root, env: undefined as never }, new Style(false));
  }
  let stopped = false;
  let wake = () => {};
  if (argv.includes('--watch') || argv.includes('-w')) {
    process.on('SIGINT', () => {
      if (stopped) process.exit(130);
      stopped = true;
      wake();
    });
  }
  const sleep = (ms: number) =>
    stopped
      ? Promise.resolve(false)
      : new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(true), ms);
          wake = () => {
            clearTimeout(timer);
            resolve(false);
          };
        });
  return main(argv, { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd(), root, env, sleep });
}
