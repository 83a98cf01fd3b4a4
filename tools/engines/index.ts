// Every engine the service runs, one module per engine in this folder. The boot check
// (server/engines.ts) and the operations' `engines` read the commands from these declarations,
// so a command no engine declares cannot be required, and each command's package is known.
//
// Adding an engine: a module here that declares it (declareEngine), builds every command line of
// that engine with a reason per flag, says what its exit codes mean and maps its failures to the
// error catalog (../process/tool-errors.ts for runs that did not complete); then add it below,
// its package to system-packages.txt, and a test in test/unit/tools/engines/.
import type { EngineDeclaration } from './declare.js';
import { GS } from './gs.js';
import { JPEGTRAN } from './jpegtran.js';
import { MUTOOL } from './mutool.js';
import { OCRMYPDF } from './ocrmypdf.js';
import { PNGQUANT } from './pngquant.js';
import { POPPLER } from './poppler.js';
import { QPDF } from './qpdf.js';
import { TESSERACT } from './tesseract.js';
import { WEASYPRINT } from './weasyprint.js';
import { LIBREOFFICE } from './libreoffice.js';
import { CHROMIUM } from './chromium.js';

export const ENGINES = [QPDF, MUTOOL, GS, POPPLER, TESSERACT, JPEGTRAN, PNGQUANT, WEASYPRINT, OCRMYPDF, LIBREOFFICE, CHROMIUM] as const;

/** A command some engine runs: what an operation may list in its `engines`. */
export type EngineCommand = typeof ENGINES[number]['commands'][number];

/** The engine that declares the command. */
export function engineOf(command: EngineCommand): EngineDeclaration {
  const engine = ENGINES.find((e) => (e.commands as readonly string[]).includes(command));
  if (!engine) throw new Error(`no engine in tools/engines/ declares the command ${command}`);
  return engine;
}
