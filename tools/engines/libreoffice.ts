// LibreOffice, headless: converts an Office document (Word, Excel, PowerPoint, OpenDocument, RTF)
// to PDF. Each run gets a fresh user profile inside its scratch directory, seeded with settings
// that keep a document from doing anything but being drawn: macros never run, links and external
// data are never updated, linked content is not fetched, and every URL it would fetch goes to a
// proxy that does not exist. Its command line, that profile and what its failures mean are here.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import { fail } from '../../core/errors.js';
import { runTool, type RunResult } from '../process/run-tool.js';
import { toolFailure } from '../process/tool-errors.js';
import { declareEngine } from './declare.js';

/**
 * `soffice` starts oosplash, which forks soffice.bin: the run's process group holds both, and the
 * deadline kills the group. Writer comes with libreoffice-writer-nogui; system-packages.txt also
 * installs the Calc and Impress components (libreoffice-calc-nogui, libreoffice-impress-nogui).
 */
export const LIBREOFFICE = declareEngine({ name: 'LibreOffice', commands: ['soffice'], package: 'libreoffice-writer-nogui' });

/**
 * The import filter of each format the service converts, by LibreOffice's filter name. A run names
 * it (--infilter), so LibreOffice reads the file as the format the checks before payment found, or
 * fails: it never falls back to another filter (its plain-text import takes anything).
 */
export const IMPORT_FILTERS = {
  docx: 'MS Word 2007 XML',
  docm: 'MS Word 2007 XML VBA',
  xlsx: 'Calc MS Excel 2007 XML',
  xlsm: 'Calc MS Excel 2007 VBA XML',
  pptx: 'Impress MS PowerPoint 2007 XML',
  pptm: 'Impress MS PowerPoint 2007 XML VBA',
  odt: 'writer8',
  ods: 'calc8',
  odp: 'impress8',
  rtf: 'Rich Text Format',
  doc: 'MS Word 97',
  // Word 6.0 and Word 95 files (their FIB's nFib says which): the Word 97 filter cannot load them.
  doc6: 'MS WinWord 6.0',
  xls: 'MS Excel 97',
  ppt: 'MS PowerPoint 97',
} as const;
export type OfficeFormat = keyof typeof IMPORT_FILTERS;

/** The address every URL a document names is sent to: nothing listens there (port 9, discard). */
const NOWHERE = { host: '127.0.0.1', port: 9 };

/**
 * The profile's settings (registrymodifications.xcu), each for a reason. LibreOffice reads them
 * before it opens the document, and a document cannot change them.
 */
const PROFILE_SETTINGS: ReadonlyArray<{ path: string; name: string; value: string; why: string }> = [
  // 3 is "very high": only signed macros from trusted locations, and there are none (SecureURL empty).
  { path: '/org.openoffice.Office.Common/Security/Scripting', name: 'MacroSecurityLevel', value: '3', why: 'very high: no macro runs unless signed and trusted' },
  { path: '/org.openoffice.Office.Common/Security/Scripting', name: 'DisableMacrosExecution', value: 'true', why: 'no macro runs at all, signed or not, nor on document events' },
  { path: '/org.openoffice.Office.Common/Security/Scripting', name: 'SecureURL', value: '', why: 'no trusted locations' },
  { path: '/org.openoffice.Office.Common/Security/Scripting', name: 'BlockUntrustedRefererLinks', value: 'true', why: 'linked images and other content a document names by URL are not loaded' },
  // Writer's link update: 0 always, 1 on request, 2 never; Calc's: 0 always, 1 never, 2 on request.
  { path: '/org.openoffice.Office.Writer/Content/Update', name: 'Link', value: '2', why: 'links and external data in text documents are never updated' },
  { path: '/org.openoffice.Office.Calc/Content/Update', name: 'Link', value: '1', why: 'external references in spreadsheets are never updated' },
  { path: '/org.openoffice.Office.Common/Save/Document', name: 'LoadPrinter', value: 'false', why: 'the printer a document names is not looked up (no print server is asked)' },
  // Anything still fetched goes through a proxy that does not exist.
  { path: '/org.openoffice.Inet/Settings', name: 'ooInetProxyType', value: '1', why: 'manual proxy settings, the ones below' },
  ...(['HTTP', 'HTTPS', 'FTP'] as const).flatMap((scheme) => [
    { path: '/org.openoffice.Inet/Settings', name: `ooInet${scheme}ProxyName`, value: NOWHERE.host, why: `${scheme} goes to a proxy nothing listens on` },
    { path: '/org.openoffice.Inet/Settings', name: `ooInet${scheme}ProxyPort`, value: String(NOWHERE.port), why: `${scheme} goes to a proxy nothing listens on` },
  ]),
  { path: '/org.openoffice.Inet/Settings', name: 'ooInetNoProxy', value: '', why: 'no address is exempt from the proxy' },
];

const xmlText = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** The registrymodifications.xcu a fresh profile starts with. */
export function profileSettingsXml(): string {
  const items = PROFILE_SETTINGS.map(({ path: node, name, value }) =>
    `<item oor:path="${node}"><prop oor:name="${name}" oor:op="fuse"><value>${xmlText(value)}</value></prop></item>`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">',
    ...items,
    '</oor:items>',
    '',
  ].join('\n');
}

/** Writes a fresh profile under `dir` and returns the URL LibreOffice is given for it. */
export function seedProfile(dir: string): string {
  const profile = path.join(dir, 'profile');
  mkdirSync(path.join(profile, 'user'), { recursive: true, mode: 0o700 });
  writeFileSync(path.join(profile, 'user', 'registrymodifications.xcu'), profileSettingsXml());
  return pathToFileURL(profile).href;
}

export interface OfficeConversion {
  /** The document, named with its format's extension (LibreOffice names the PDF after it). */
  input: string;
  format: OfficeFormat;
  /** The run's scratch directory: the profile, HOME, TMPDIR and the PDF are written here. */
  cwd: string;
  timeoutMs: number;
}

/** The command line, each option for a reason; the PDF is written to `outdir` under the input's name. */
export function sofficeArgs(run: Pick<OfficeConversion, 'input' | 'format'>, profileUrl: string, outdir: string): string[] {
  return [
    // No window, no display: LibreOffice's headless backend.
    '--headless',
    // No document recovery from an earlier crash, no lock files beside the input, no start centre.
    '--norestore', '--nolockcheck', '--nodefault', '--nologo',
    // The fresh profile this run seeded: nothing is shared with other runs, nothing outlives it.
    `-env:UserInstallation=${profileUrl}`,
    // Read as the format the checks found, or not at all.
    `--infilter=${IMPORT_FILTERS[run.format]}`,
    // The document component's own PDF export (writer_pdf_Export, calc_pdf_Export, impress_pdf_Export).
    '--convert-to', 'pdf',
    '--outdir', outdir,
    run.input,
  ];
}

/** The PDF a run writes: the input's name with .pdf. */
export function convertedPath(input: string, outdir: string): string {
  return path.join(outdir, `${path.basename(input, path.extname(input))}.pdf`);
}

/**
 * What a run that wrote no PDF means to the client; never its stderr, which may quote the file.
 * soffice exits 0 when the document cannot be loaded ("Error: source file could not be loaded"),
 * so the missing PDF is what says the conversion failed.
 */
function explain(result: RunResult): never {
  if (/cannot open shared object|error while loading shared libraries|no export filter|failed to start/i.test(result.stderr)) {
    fail('UNAVAILABLE', 'LibreOffice is not fully installed on this deployment; nothing was charged');
  }
  // Exit 0 without a PDF: the import filter refused the file; any other status: it stopped while reading.
  fail('CORRUPT_INPUT', 'the document cannot be converted: LibreOffice could not read it; nothing was charged', { field: 'file' });
}

/** Converts one document to PDF, killed with everything it started at the deadline; returns the PDF's path. */
export async function convertToPdf(run: OfficeConversion): Promise<string> {
  const profileUrl = seedProfile(run.cwd);
  const outdir = path.join(run.cwd, 'out');
  let result: RunResult;
  try {
    result = await runTool(LIBREOFFICE.commands[0], sofficeArgs(run, profileUrl, outdir), {
      cwd: run.cwd,
      timeoutMs: run.timeoutMs,
      // soffice prints one line per document; nothing else is read from it.
      maxStdout: 64 * 1024,
      // One thread for its own thread pool (formula and layout work), as every job has one core.
      env: { SAL_USE_VCLPLUGIN: 'svp', MAX_CONCURRENCY: '1' },
    });
  } catch (err) {
    toolFailure(err, 'the document conversion');
  }
  const pdf = convertedPath(run.input, outdir);
  if (!existsSync(pdf)) explain(result);
  return pdf;
}
