// esbuild plugins of the Lambda bundles (serverless-esbuild `plugins`, see
// infra/esbuild.yml; scripts/bench.ts builds with the same list). Each one only
// drops code a Lambda function never runs; neither changes behaviour there.
//
// zod-english-only
//   `import { z } from 'zod'` keeps zod's whole namespace object, and with it
//   the error messages of every language zod ships (about 250 KiB). nodescaler
//   reports errors in English only (zod's default locale, registered by
//   zod/v4/classic/schemas.js itself), so `z.locales` keeps `en` alone;
//   `z.config(z.locales.<other>())` is not available in a bundle.
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
'use strict';
const { createRequire } = require('node:module');
const fs = require('node:fs/promises');
const path = require('node:path');

const serviceDir = path.resolve(__dirname, '..');
const fromService = createRequire(path.join(serviceDir, 'package.json'));

/** The ESM entry (module field) of a package, resolved from the directory of another package. */
function esmEntryOf(name, fromPackage) {
  const from = createRequire(fromService.resolve(`${fromPackage}/package.json`));
  const manifestPath = from.resolve(`${name}/package.json`);
  const manifest = require(manifestPath);
  return path.join(path.dirname(manifestPath), manifest.module || manifest.main);
}

const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /(^|\/)locales\/index\.js$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer)
        ? { path: path.join(path.dirname(args.importer), args.path.replace(/index\.js$/, 'en.js')), namespace: 'zod-locales' }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};\n`,
      resolveDir: path.dirname(args.path),
      loader: 'js',
    }));
  },
};

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

const sdkSchemasTreeShakable = {
  name: 'sdk-schemas-tree-shakable',
  setup(build) {
    build.onLoad({ filter: /[\\/]@aws-sdk[\\/][^\\/]+[\\/]dist-es[\\/](?:.*[\\/])?schemas[\\/]schemas_\d+\.js$/ }, async (args) => {
      let text = await fs.readFile(args.path, 'utf8');
      const strings = new Map();
      for (const match of text.matchAll(/^const (_[A-Za-z0-9_]+) = ("[^"\\\n]*");$/gm)) strings.set(match[1], match[2]);
      text = text.replace(/([{,]\s*)\[(_[A-Za-z0-9_]+)\]:/g, (all, before, name) => (strings.has(name) ? `${before}${strings.get(name)}:` : all));
      return { contents: text, loader: 'js', resolveDir: path.dirname(args.path) };
    });
  },
};

module.exports = [zodEnglishOnly, lambdaCredentials, sdkSchemasTreeShakable];
