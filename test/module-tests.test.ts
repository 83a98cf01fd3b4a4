// Every source module has a test a maintainer finds from its path: its unit test at the mirrored
// path (test/unit/<folder>/<path>/<name>.test.ts, or one test for a folder of small modules,
// test/unit/<folder>/<path>.test.ts), an operation its own file in test/service/operations/
// (<kind>-<name>.test.ts), or a line below saying which service or system tests cover it and why
// it has no unit test. A module that declares only types needs none. The list only shrinks: an
// entry whose module is gone or now has a unit test fails here too.
import Lab from '@hapi/lab';
import Code from '@hapi/code';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The folders whose modules this holds to it. */
const FOLDERS = ['core', 'checks', 'tools', 'server', 'operations', 'client'];

/** Modules covered only by service or system tests: where, and why no unit test. */
const SERVICE_TESTED: Record<string, string> = {
  // The error catalog and the job contract are used by every test; their shapes are asserted
  // through the surfaces (service/foundation: one error shape and status per code).
  'core/errors.ts': 'service/foundation, service/bad-input (every code, its status and shape on both surfaces)',
  'core/job.ts': 'service/operations/* through support/jobs.ts (the contract between front end and pool)',
  // The checks other than image and PDF run inside an operation's plan.
  'checks/web-page.ts': 'service/operations/pdf-from-html, service/bad-input (the pages and ZIPs refused before payment)',
  'checks/redaction.ts': 'service/operations/pdf-redact (the fields redact accepts, before payment)',
  'checks/schema.ts': 'service/operations/model, service/bad-input (the JSON Schemas structured accepts)',
  // The paying side is shown paying on the local chains, which a unit test would only imitate.
  'client/payer.ts': 'service/payments, system/cli, system/mcp-bridge, system/channel-buyer, service/channels-every-route (paying on the local Base and Solana chains, and through a channel)',
  'client/svm-payer.ts': 'service/payments, service/payment-rig (Solana payments on the local chain)',
  'core/page-fetch.ts': 'unit/server/outbound/page-fetches (the worker\'s end of the channel, against the front end\'s)',
  'core/protocol.ts': 'service/mcp, system/mcp-bridge (the MCP payment and receipt _meta keys, the base64 limit)',
  'operations/index.ts': 'unit/operations/define, readme-operations, service/surfaces (the table every description derives from)',
  'operations/input-kinds.ts': 'service/surfaces, service/bad-input, readme-operations (how each input kind is named, tagged and typed)',
  'operations/shared.ts': 'service/bad-input, readme-operations (the input limits shared by operations)',
  'operations/image/image-plan.ts': 'service/operations/image-shared and each image-<name> file (the plan the five image operations share)',
  // Operations without a file of their own: the model-backed four, and merge-compress beside merge.
  'operations/image/ocr.ts': 'service/operations/model, service/operations/model-http (the four model-backed operations together)',
  'operations/pdf/ocr.ts': 'service/operations/model, service/operations/model-http',
  'operations/pdf/structured.ts': 'service/operations/model, service/operations/model-http',
  'operations/pdf/merge-compress.ts': 'service/operations/pdf-merge (merge, then compress: tested with merge)',
  // The service's own wiring: only the running service shows it.
  'server/index.ts': 'every service test starts it (support/service.ts)',
  'server/config.ts': 'service/foundation (configuration), system/deploy (the manifests\' settings), docs-configuration (the documented defaults)',
  'server/pipeline.ts': 'service/bad-input, service/foundation (the generic checks in order, before payment)',
  'server/paid-call.ts': 'service/payments, service/faults, service/mcp (the one paid-request path, HTTP and MCP)',
  'server/pool.ts': 'service/faults, service/foundation (the worker pool, deadlines and back-pressure)',
  'server/payment/gate.ts': 'unit/server/payment/stages (each stage), service/payments, service/faults (the gate on the chains)',
  'server/payment/facilitators.ts': 'service/going-live, service/hosted-facilitators (the hosted facilitators\' clients)',
  'server/payment/channels/channels.ts': 'service/channels, system/channels-restart (the schedule, claims and sweeps on the chain)',
  'server/plugins/channels.ts': 'service/channels (the refund route with x402\'s client)',
  'server/plugins/x402-http.ts': 'service/payments, service/channels (the 402 header and the payment header)',
  'server/payment/setup.ts': 'service/going-live, service/hosted-facilitators, layers (the chains and facilitators the gate is given)',
  'server/plugins/body.ts': 'service/foundation (lent buffers), service/upload-limits, service/uploads-under-load',
  'server/plugins/connection.ts': 'service/upload-limits, service/bad-input (raw sockets)',
  'server/plugins/dev.ts': 'system/web, system/production-install (the /dev routes, absent in live mode)',
  'server/plugins/errors.ts': 'service/bad-input, service/foundation',
  'server/plugins/free.ts': 'service/surfaces, service/foundation (health, catalog, OpenAPI, llms.txt)',
  'server/plugins/mcp.ts': 'service/mcp, system/mcp-conformance',
  'server/plugins/multipart.ts': 'service/bad-input, service/upload-limits',
  'server/plugins/operations.ts': 'service/bad-input, service/payments (the HTTP routes)',
  'server/plugins/web.ts': 'system/web, service/web-solana-relay',
  // Process plumbing below run-tool and the MuPDF.js child: shown through the engines that use them.
  'tools/engines/declare.ts': 'unit/tools/engines/index (declareEngine only types its argument)',
  'tools/engines/mupdf-js.ts': 'service/operations/pdf-redact, pdf-sanitize, pdf-stamp, pdf-forms, pdf-metadata, pdf-from-images (MuPDF.js in a child process)',
  'tools/engines/mupdf-js-process.ts': 'service/operations/pdf-redact, pdf-sanitize, pdf-stamp, pdf-forms, pdf-metadata, pdf-from-images',
  'tools/engines/mupdf-js-images.ts': 'service/operations/pdf-from-images (in the MuPDF.js child: pages drawn by poppler and MuPDF, sizes read by pdfinfo)',
  'tools/engines/mupdf-js-stamp.ts': 'service/operations/pdf-stamp (in the MuPDF.js child: read back by poppler, pdf.js and MuPDF, and drawn)',
  'tools/engines/mupdf-js-forms.ts': 'service/operations/pdf-forms, service/operations/pdf-metadata (in the MuPDF.js child: read, fill, flatten, metadata)',
  'checks/forms.ts': 'service/operations/pdf-forms (XFA and form-fill\'s values refused before payment, each named)',
  'operations/pdf/form-fields.ts': 'service/operations/pdf-forms (form-fields, form-fill and flatten together, on one form)',
  'operations/pdf/form-fill.ts': 'service/operations/pdf-forms',
  'operations/pdf/flatten.ts': 'service/operations/pdf-forms',
  'operations/pdf/set-metadata.ts': 'service/operations/pdf-metadata (written, then read back by metadata and qpdf)',
  'tools/engines/mupdf-js-redaction.ts': 'service/operations/pdf-redact (in the MuPDF.js child: both readers, passes, embedded files)',
  'tools/engines/office-text-redaction.ts': 'service/operations/pdf-redact (an embedded DOCX redacted in the MuPDF.js child)',
  'tools/process/launcher-process.ts': 'unit/tools/process/run-tool, service/faults (the launcher replaced once it dies)',
  'tools/process/scratch-directory.ts': 'unit/tools/process/tool-errors',
  'tools/process/spawn-with-limits.ts': 'unit/tools/process/run-tool (deadline, group kill, bounded capture)',
};

/** Source modules (TypeScript and the MuPDF programs), as paths from the repository root. */
function sourceModules(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceModules(rel);
    return /\.(ts|js)$/.test(e.name) && !e.name.endsWith('.d.ts') ? [rel] : [];
  }).sort();
}

/** A module whose compiled output is empty declares types only (type-only imports are erased). */
function typesOnly(module: string): boolean {
  if (!module.endsWith('.ts')) return false;
  const compiled = readFileSync(path.join(root, 'dist', module.replace(/\.ts$/, '.js')), 'utf8');
  const code = compiled.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '').replace(/export \{\};/, '').trim();
  return code === '';
}

/** Where a module's tests are found from its path, or undefined. */
function testOf(module: string): string | undefined {
  const stem = module.replace(/\.(ts|js)$/, '');
  const candidates = [`test/unit/${stem}.test.ts`, `test/unit/${path.posix.dirname(module)}.test.ts`];
  const operation = /^operations\/(image|pdf|office)\/([a-z-]+)\.ts$/.exec(module);
  if (operation) {
    // Its file, or a file of it with a suffix (pdf-tables-local.test.ts).
    const named = `${operation[1]}-${operation[2]}`;
    const files = readdirSync(path.join(root, 'test/service/operations'));
    const found = files.find((f) => f === `${named}.test.ts`) ?? files.find((f) => f.startsWith(`${named}-`) && f.endsWith('.test.ts'));
    if (found) candidates.push(`test/service/operations/${found}`);
  }
  return candidates.find((file) => existsSync(path.join(root, file)));
}

describe('tests found from their source', () => {
  const modules = FOLDERS.flatMap((folder) => sourceModules(folder));

  it('every module has a unit test at its path, its operation\'s file, or a line in the list of service-tested modules', () => {
    expect(modules.length).to.be.above(100);
    const untested = modules.filter((m) => !typesOnly(m) && testOf(m) === undefined && !(m in SERVICE_TESTED));
    expect(untested, 'add a test at test/unit/<module path>.test.ts (test/README.md)').to.equal([]);
  });

  it('the list names only modules that exist, have no test at their path, and declare code', () => {
    const stale = Object.keys(SERVICE_TESTED).filter((m) => !modules.includes(m) || testOf(m) !== undefined || typesOnly(m));
    expect(stale, 'remove these from SERVICE_TESTED').to.equal([]);
  });

  it('every unit test mirrors a module or a folder of modules', () => {
    const unitTests = (dir: string): string[] => readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) return unitTests(rel);
      return e.name.endsWith('.test.ts') ? [rel] : [];
    });
    const orphans = unitTests('test/unit').filter((test) => {
      const stem = test.slice('test/unit/'.length).replace(/\.test\.ts$/, '');
      return !existsSync(path.join(root, `${stem}.ts`)) && !existsSync(path.join(root, `${stem}.js`)) && !existsSync(path.join(root, stem));
    });
    expect(orphans, 'a unit test is named after the module it tests').to.equal([]);
  });
});
