// esbuild plugins of the Lambda bundles (serverless-esbuild `plugins`, see
// infra/esbuild.yml; scripts/bundle-functions.mjs, which the cold-start bench
// and the tests use, builds with the same list). serverless-esbuild calls the
// function this file exports with the Serverless instance, so the plugins know
// the stage being packaged.
//
// lambda-credentials
//   The SDK's default credential chain (@aws-sdk/credential-provider-node)
//   bundles the SSO, STS, web identity, profile file and IMDS providers (about
//   130 KiB). In Lambda the chain always stops at its first link, the
//   environment variables the runtime sets for the execution role (and
//   `serverless invoke local` sets them from the caller's profile), so the
//   bundles use that link alone: fromEnv of @aws-sdk/credential-provider-env,
//   resolved where the chain itself resolves it.
//
// sdk-schemas-tree-shakable
//   The SDK clients describe every operation of their service in
//   dist-es/schemas/schemas_0.js (EC2: 540 KiB minified). Its shapes use
//   computed keys (`{ [_xN]: _PEA }`) whose names are module-level string
//   constants; esbuild cannot prove a computed key free of side effects, so it
//   keeps every shape. The plugin writes those keys as the string literals the
//   constants hold (`{ "xmlName": _PEA }`: the same object), and esbuild then
//   drops the shapes of operations a function never calls (EC2 client: 540 KiB
//   of schemas down to 30 KiB for RunInstances, DescribeInstances, TerminateInstances).
//   The same file registers every modelled error class of the service, which
//   keeps them all (SSM: 141 classes, about 55 KiB in each function that runs
//   broker commands). For the clients in ERRORS_BY_NAME those registrations
//   are dropped: the SDK then throws the service's base exception with the
//   error's name, fault and message, which is all our adapters read.
//
// zod-locale-where-used
//   lib/zod.ts registers zod's English messages when it is imported: a side
//   effect, so esbuild keeps it, and with it zod's core and English locale
//   (about 3.4 KiB, run at every cold start), in every bundle that imports a
//   module importing it, even where no zod schema is built: a Lambda function
//   reaches lib/config/schema.ts for its helpers and lib/config/cli-env.ts,
//   but validates with plain code (lib/config/load.ts, lib/messages/). Marked
//   free of side effects, lib/zod.ts stays, registration included, in any
//   bundle that uses one of its exports, and only there.
//
// sdk-package-version
//   Every SDK client imports its whole package.json (about 2.3 KiB minified
//   each) for one field, `version`, in the user agent. The plugin gives it
//   `name` and `version` alone.
//
// middy-lazy-web-streams
//   @middy/core imports ReadableStream from node:stream/web for response
//   streaming, which these functions never use (they answer SQS and schedule
//   events), so every cold start loaded Node's web streams (stream/web and the
//   modules it pulls in: about 3 ms, 4 % of a function's load). middy uses the
//   import for one `instanceof` test, on the streaming path only: the plugin
//   gives it a class whose instanceof defers to the global ReadableStream,
//   which Node loads on first use.
//
// stage-configuration (with a stage: `serverless package`, the bench)
//   The stage's configuration file (serverless.yml's `configFile` parameter) is
//   read and validated at packaging, by lib/config/parse.ts itself (compiled
//   here with esbuild), and lib/config/packaged.ts becomes that configuration,
//   parsed and defaulted: a deployed function does not read a file, parse YAML
//   or validate its configuration when it starts, and a wrong file fails the
//   packaging. lib/config/parse.ts becomes a stub that refuses
//   NODESCALER_CONFIG and NODESCALER_CONFIG_FILE with a clear error at cold
//   start, so neither the YAML parser nor the configuration schema is bundled
//   (about 140 KiB and 40 ms of a cold start, with the yaml package).
//
// stage-adapters (with a stage)
//   A function builds the adapters its configuration names (lib/config/adapters.ts:
//   the handler's cloud, Route 53 with `dns`, SNS notices with `notify`, the
//   broker over SSM with `openshift-broker`). The module of every other
//   adapter becomes a stub whose factory throws, so its AWS client is not
//   bundled: with handler `log` no function holds EC2, S3, SNS or Route 53.
//   A function never meets a stub: its configuration is the one packaged
//   with it. Should one be reached, its error says to package the stage again.
'use strict';
const { createRequire } = require('node:module');
const fs = require('node:fs/promises');
const { rmSync } = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { isDeepStrictEqual } = require('node:util');

const serviceDir = path.resolve(__dirname, '..');
const fromService = createRequire(path.join(serviceDir, 'package.json'));

/** The ESM entry (module field) of a package, resolved from the directory of another package. */
function esmEntryOf(name, fromPackage) {
  const from = createRequire(fromService.resolve(`${fromPackage}/package.json`));
  const manifestPath = from.resolve(`${name}/package.json`);
  const manifest = require(manifestPath);
  return path.join(path.dirname(manifestPath), manifest.module || manifest.main);
}

const lambdaCredentials = {
  name: 'lambda-credentials',
  setup(build) {
    build.onResolve({ filter: /^@aws-sdk\/credential-provider-node$/ }, () => ({
      path: 'credential-provider-node',
      namespace: 'lambda-credentials',
    }));
    build.onLoad({ filter: /.*/, namespace: 'lambda-credentials' }, () => {
      const fromEnv = esmEntryOf('@aws-sdk/credential-provider-env', '@aws-sdk/credential-provider-node');
      return {
        contents:
          `import { fromEnv } from ${JSON.stringify(fromEnv)};\n` +
          '// Lambda sets AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN for the execution role.\n' +
          'export const defaultProvider = (init = {}) => fromEnv(init);\n' +
          'export const credentialsWillNeedRefresh = () => false;\n' +
          'export const credentialsTreatedAsExpired = () => false;\n',
        resolveDir: serviceDir,
        loader: 'js',
      };
    });
  },
};

/**
 * The clients whose modelled errors our adapters tell apart by name alone
 * (lib/adapters/aws-errors.ts, the broker adapter's errorName): their error
 * classes need not be registered. DynamoDB (a failed condition's `Item`), SQS
 * (query-compatible codes) and the others keep theirs.
 */
const ERRORS_BY_NAME = /[\\/]@aws-sdk[\\/]client-(?:ssm|pricing)[\\/]/;

const sdkSchemasTreeShakable = {
  name: 'sdk-schemas-tree-shakable',
  setup(build) {
    build.onLoad({ filter: /[\\/]@aws-sdk[\\/][^\\/]+[\\/]dist-es[\\/](?:.*[\\/])?schemas[\\/]schemas_\d+\.js$/ }, async (args) => {
      let text = await fs.readFile(args.path, 'utf8');
      const strings = new Map();
      for (const match of text.matchAll(/^const (_[A-Za-z0-9_]+) = ("[^"\\\n]*");$/gm)) strings.set(match[1], match[2]);
      text = text.replace(/([{,]\s*)\[(_[A-Za-z0-9_]+)\]:/g, (all, before, name) => (strings.has(name) ? `${before}${strings.get(name)}:` : all));
      if (ERRORS_BY_NAME.test(args.path)) text = text.replace(/^n0_registry\.registerError\((\w+)\$, \1\);$/gm, '');
      return { contents: text, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};

const zodLocaleWhereUsed = {
  name: 'zod-locale-where-used',
  setup(build) {
    const zodModule = path.join(serviceDir, 'lib', 'zod.ts');
    build.onResolve({ filter: /[\\/]zod\.js$/ }, (args) => {
      const resolved = path.resolve(args.resolveDir, args.path.replace(/\.js$/, '.ts'));
      return resolved === zodModule ? { path: zodModule, sideEffects: false } : undefined;
    });
  },
};

const sdkPackageVersion = {
  name: 'sdk-package-version',
  setup(build) {
    build.onLoad({ filter: /[\\/]@aws-sdk[\\/][^\\/]+[\\/]package\.json$/ }, async (args) => {
      const { name, version } = JSON.parse(await fs.readFile(args.path, 'utf8'));
      return { contents: JSON.stringify({ name, version }), loader: 'json' };
    });
  },
};

const MIDDY_WEB_STREAMS = 'export class ReadableStream { static [Symbol.hasInstance](value) { return value instanceof globalThis.ReadableStream; } }';

const middyLazyWebStreams = {
  name: 'middy-lazy-web-streams',
  setup(build) {
    build.onResolve({ filter: /^node:stream\/web$/ }, (args) =>
      /[\\/]@middy[\\/]core[\\/]/.test(args.importer) ? { path: 'node:stream/web', namespace: 'middy-lazy-web-streams' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'middy-lazy-web-streams' }, () => ({ contents: MIDDY_WEB_STREAMS, loader: 'js' }));
  },
};

/** A module of the service, by its path relative to the service directory. */
const serviceFile = (relative) => path.join(serviceDir, ...relative.split('/'));

/**
 * The adapter modules a stage may leave out: what needs each one (a field of
 * lib/config/adapters.ts's AdapterChoice), and the names lib/adapters/cloud/from-settings.ts
 * and lib/adapters/platform/from-settings.ts import from it (esbuild stops
 * with "No matching export" should they import another).
 */
const ADAPTER_MODULES = [
  { file: 'lib/adapters/ec2/cloud.ts', what: 'handler ec2', needed: (a) => a.cloud === 'ec2', functions: ['ec2CloudFor', 'ec2HostsFor'] },
  { file: 'lib/adapters/ec2/sender-hosts.ts', what: 'statsAuth (node-stats senders looked up in EC2)', needed: (a) => a.senderHosts, functions: ['ec2SenderHostsFor'] },
  { file: 'lib/adapters/ec2/spot-prices.ts', what: 'handler ec2 with a spot pool (spot prices read from EC2)', needed: (a) => a.spotPrices, functions: ['ec2SpotPricesFor'] },
  { file: 'lib/adapters/ec2/launch-template-versions.ts', what: 'handler ec2 with a launch template at $Latest or $Default (its versions read from EC2)', needed: (a) => a.launchTemplateVersions, functions: ['ec2LaunchTemplateVersionsFor'] },
  { file: 'lib/adapters/pricing/on-demand-prices.ts', what: 'handler ec2 (on-demand prices read from the AWS Price List)', needed: (a) => a.onDemandPrices, functions: ['awsOnDemandPricesFor'] },
  { file: 'lib/adapters/s3/spool-cloud.ts', what: 'handler spool', needed: (a) => a.cloud === 'spool', functions: ['s3SpoolCloudFor'] },
  { file: 'lib/adapters/sns/notify-cloud.ts', what: 'handler notify', needed: (a) => a.cloud === 'notify', functions: ['snsNotifyCloudFor'] },
  // No client, but the user data and the stats agent it writes into every request (about 9 KiB).
  { file: 'lib/adapters/cloud/log-cloud.ts', what: 'handler log', needed: (a) => a.cloud === 'log', classes: ['LogCloud'] },
  { file: 'lib/adapters/sns/notifier.ts', what: 'notify.topicArn (operator notices)', needed: (a) => a.notifier, functions: ['snsNotifierFor'] },
  { file: 'lib/adapters/route53/dns.ts', what: 'dns (Route 53 records)', needed: (a) => a.dns, functions: ['route53DnsFor'] },
  { file: 'lib/adapters/platform/openshift-broker.ts', what: 'platform openshift-broker', needed: (a) => a.platform === 'openshift-broker', functions: ['openShiftBrokerPlatformFor'] },
  { file: 'lib/adapters/local/simulated-platform.ts', what: 'platform simulated', needed: (a) => a.platform === 'simulated', classes: ['SimulatedPlatform'] },
];

const stages = new Map();

/**
 * The stage's configuration, read and validated by lib/config/parse.ts, and the
 * adapters it uses (lib/config/adapters.ts): both modules compiled with esbuild
 * to a temporary CommonJS file, since this file runs in plain Node (Serverless).
 * Once per file and process: serverless-esbuild builds each function apart.
 */
function stageOf(configFile) {
  const known = stages.get(configFile);
  if (known) return known;
  const esbuild = fromService('esbuild');
  const compiled = path.join(os.tmpdir(), `nodescaler-packaging-${process.pid}-${stages.size}.cjs`);
  esbuild.buildSync({
    stdin: {
      contents:
        "export { readConfigFile } from './lib/config/parse.ts';\nexport { adaptersOf } from './lib/config/adapters.ts';\n" +
        "export { deploymentIssues } from './lib/config/consistency.ts';\nexport { configWarnings } from './lib/config/warnings.ts';\nexport { ValidationError } from './lib/errors.ts';\n",
      resolveDir: serviceDir,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile: compiled,
    logLevel: 'error',
  });
  let packaging;
  try {
    packaging = require(compiled);
  } finally {
    delete require.cache[compiled];
    rmSync(compiled, { force: true });
  }
  const source = path.relative(serviceDir, configFile).split(path.sep).join('/');
  // Throws the ValidationError that lists every problem: the packaging stops there.
  const config = packaging.readConfigFile(configFile);
  // A stage that launches real hosts needs the real platform (lib/config/consistency.ts).
  const deployment = packaging.deploymentIssues(config);
  if (deployment.length > 0) throw new packaging.ValidationError(deployment, `configuration ${source}`);
  // Loud, not fatal: a site whose node hosts have no instance profile may run without the sender check.
  for (const warning of packaging.configWarnings(config)) console.warn(`\n!!! nodescaler ${source}: WARNING: ${warning}\n`);
  // The bundle carries it as JSON: it must come back the same (no Date, undefined or NaN in it).
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(config)), config)) throw new Error(`${source}: the parsed configuration does not survive JSON`);
  const adapters = packaging.adaptersOf(config);
  const stage = { source, config, adapters, summary: `handler ${adapters.cloud}, platform ${adapters.platform}` };
  stages.set(configFile, stage);
  return stage;
}

/** Replaces one module of the service (by its path) with generated code. */
function replaceModule(name, file, contents) {
  const target = serviceFile(file);
  return {
    name,
    setup(build) {
      build.onLoad({ filter: new RegExp(`${path.basename(file).replace(/[.]/g, '\\.')}$`) }, (args) =>
        path.resolve(args.path) === target ? { contents: contents(), loader: 'js', resolveDir: path.dirname(target) } : undefined,
      );
    },
  };
}

function stagePlugins(stage) {
  const errors = JSON.stringify(serviceFile('lib/errors.ts'));
  const plugins = [
    replaceModule('stage-configuration', 'lib/config/packaged.ts', () => `export const packagedConfiguration = ${JSON.stringify({ source: stage.source, config: stage.config })};\n`),
    replaceModule('stage-configuration-only', 'lib/config/parse.ts', () => {
      const why = `a deployed function runs the configuration it was packaged with (${stage.source}); to change it, edit that file and deploy again`;
      return (
        `import { ValidationError } from ${errors};\n` +
        `const refuse = (source) => { throw new ValidationError({ path: '', message: ${JSON.stringify(why)} }, source); };\n` +
        "export function parseConfig(input, source = 'configuration') { return refuse(source); }\n" +
        'export function readConfigFile(path) { return refuse(`configuration ${path}`); }\n' +
        "export function configIssues() { return refuse('configuration'); }\n"
      );
    }),
  ];
  for (const adapter of ADAPTER_MODULES) {
    if (adapter.needed(stage.adapters)) continue;
    const message = JSON.stringify(
      `${adapter.what} is not in this bundle: it was packaged for ${stage.source} (${stage.summary}); package the stage again for this configuration`,
    );
    plugins.push(
      replaceModule(`stage-adapters:${adapter.file}`, adapter.file, () =>
        [
          `const notPackaged = () => { throw new Error(${message}); };`,
          ...(adapter.functions ?? []).map((name) => `export function ${name}() { return notPackaged(); }`),
          ...(adapter.classes ?? []).map((name) => `export class ${name} { constructor() { notPackaged(); } }`),
          '',
        ].join('\n'),
      ),
    );
  }
  return plugins;
}

/**
 * The plugins of a Lambda bundle. `stage.configFile` (absolute) adds the
 * stage-configuration and stage-adapters plugins; without it the bundle reads
 * its configuration at run time like the sources do.
 */
function lambdaPlugins(stage = {}) {
  return [lambdaCredentials, sdkSchemasTreeShakable, zodLocaleWhereUsed, sdkPackageVersion, middyLazyWebStreams, ...(stage.configFile ? stagePlugins(stageOf(stage.configFile)) : [])];
}

/** serverless-esbuild: the stage's configuration file is serverless.yml's custom.stageConfigurationFile. */
module.exports = (serverless) => {
  const file = serverless.service.custom?.stageConfigurationFile;
  if (typeof file !== 'string' || file === '') throw new Error('serverless.yml: custom.stageConfigurationFile must name the configuration file of the stage');
  return lambdaPlugins({ configFile: path.resolve(serverless.serviceDir ?? serviceDir, file) });
};
module.exports.lambdaPlugins = lambdaPlugins;
