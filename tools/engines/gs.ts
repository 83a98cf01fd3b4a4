// Ghostscript (gs): rewrites PDFs through its pdfwrite device, re-encoding images as JPEG at
// reduced resolution, for compress's balanced and max levels. Its command lines are built here,
// each setting with its reason; the compress work function chooses which to run and judges the
// results (Ghostscript carries on past errors in damaged files and can silently drop pages, so
// every result is counted and compared before it is used).
import { runTool, type RunOptions, type RunResult } from '../process/run-tool.js';
import { declareEngine } from './declare.js';

export const GS = declareEngine({ name: 'Ghostscript', commands: ['gs'], package: 'ghostscript' });

/** gs's exit statuses: 0 when it wrote the whole output; anything else is a failed candidate. */
export const GS_EXIT = { ok: 0 } as const;

/** The levels that run Ghostscript. */
export type GsLevel = 'balanced' | 'max';

// Plain /ebook re-encoded a photo as Flate (18x larger than DCT); forcing DCT and sharing
// duplicate images is what makes the size drop. Links, outlines and text survive pdfwrite.
const GS_IMAGES_AS_JPEG = [
  '-dAutoFilterColorImages=false', '-dColorImageFilter=/DCTEncode',
  '-dAutoFilterGrayImages=false', '-dGrayImageFilter=/DCTEncode',
  '-dDetectDuplicateImages=true',
  // Ghostscript 10 copies JPEGs through untouched by default, which leaves a scan or a photo exactly as large as before.
  '-dPassThroughJPEGImages=false', '-dPassThroughJPXImages=false',
];

export const GS_LEVEL: Record<GsLevel, readonly string[]> = {
  balanced: ['-dPDFSETTINGS=/ebook', ...GS_IMAGES_AS_JPEG],
  // /screen alone leaves images up to 1.5 x 72 dpi untouched; a threshold of 1 brings everything above 72 dpi down.
  max: ['-dPDFSETTINGS=/screen', ...GS_IMAGES_AS_JPEG, '-dColorImageResolution=72', '-dGrayImageResolution=72', '-dMonoImageResolution=150',
    '-dColorImageDownsampleThreshold=1.0', '-dGrayImageDownsampleThreshold=1.0', '-dMonoImageDownsampleThreshold=1.0'],
};

/** A named set of pdfwrite settings: the name also names the output file, so variants run side by side. */
export interface GsSettings { name: string; args: readonly string[] }

/**
 * balanced's second opinion for PDFs that already hold JPEGs: those copied through untouched.
 * A scan whose JPEGs are already tight grows when re-encoded (3.7 % larger than plain /ebook on
 * the benchmark's photographed pages), while a photo at camera quality shrinks several times, so
 * both are made and the smaller kept. Images that must be downsampled are re-encoded either way.
 */
export const GS_BALANCED_JPEG_PASS_THROUGH: GsSettings = {
  name: 'gs-jpeg-kept',
  args: GS_LEVEL.balanced.map((arg) => (arg === '-dPassThroughJPEGImages=false' ? '-dPassThroughJPEGImages=true' : arg)),
};

/** max's settings with colour and grey images brought down to `dpi` instead of 72: the steps below max. */
export function maxAtDpi(dpi: number): GsSettings {
  const resolution = /^-d(Color|Gray)ImageResolution=/;
  return { name: `gs-${dpi}dpi`, args: GS_LEVEL.max.map((arg) => (resolution.test(arg) ? arg.replace(/=\d+$/, `=${dpi}`) : arg)) };
}

export function gsArgs(level: GsLevel, out: string, inputs: readonly string[], settings: readonly string[] = GS_LEVEL[level]): string[] {
  return [
    // -q: no banner or progress; -dNOPAUSE -dBATCH: no prompt between pages, exit when done.
    '-q', '-dNOPAUSE', '-dBATCH',
    // -dSAFER: PostScript in the file cannot read or write files outside those named here.
    '-dSAFER',
    '-sDEVICE=pdfwrite',
    // PDF 1.7: what every current reader opens; keeps object streams and transparency available.
    '-dCompatibilityLevel=1.7',
    ...settings, `-sOutputFile=${out}`, ...inputs,
  ];
}

/** The inputs rewritten into `out` with the level's (or the given) settings; the result as it is. */
export function pdfwrite(
  level: GsLevel, out: string, inputs: readonly string[], settings: readonly string[], options: RunOptions,
): Promise<RunResult> {
  return runTool(GS.commands[0], gsArgs(level, out, inputs, settings), options);
}
