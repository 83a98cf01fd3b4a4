// jpegtran (libjpeg-turbo): rotates and mirrors JPEG data losslessly, moving the compressed
// blocks without decoding a pixel. Its command line is built here; the image work function
// decides which transform the picture needs and re-encodes with sharp when this returns nothing.
import { runTool, RunFailure, type RunOptions } from '../process/run-tool.js';
import { toolFailure } from '../process/tool-errors.js';
import { declareEngine } from './declare.js';

export const JPEGTRAN = declareEngine({ name: 'jpegtran', commands: ['jpegtran'], package: 'libjpeg-turbo-progs' });

/**
 * jpegtran's exit statuses: 0 success, 1 failure (with -perfect: the transform cannot be done exactly), 2 success with
 * warnings (damaged data).
 */
export const JPEGTRAN_EXIT = { ok: 0 } as const;

/** The eight lossless transforms, named as jpegtran names them. */
export const JPEG_TRANSFORMS = {
  none: [],
  rotate90: ['-rotate', '90'],
  rotate180: ['-rotate', '180'],
  rotate270: ['-rotate', '270'],
  flipHorizontal: ['-flip', 'horizontal'],
  flipVertical: ['-flip', 'vertical'],
  transpose: ['-transpose'],
  transverse: ['-transverse'],
} as const satisfies Record<string, readonly string[]>;
export type JpegTransform = keyof typeof JPEG_TRANSFORMS;

/**
 * The JPEG turned or mirrored without re-encoding; undefined when that is not possible and the
 * caller re-encodes instead: jpegtran is missing or its output passed the bound, the image's
 * edge blocks are partial for this transform, or the data has errors it warns about. A deadline
 * fails the job through toolFailure.
 */
export async function transformJpeg(
  bytes: Uint8Array, transform: JpegTransform, keepIcc: boolean, options: RunOptions,
): Promise<Uint8Array | undefined> {
  const args = [
    // The ICC profile keeps the colours right and identifies no one; EXIF, XMP and comments go.
    '-copy', keepIcc ? 'icc' : 'none',
    // Optimal Huffman tables: a few per cent smaller, still lossless.
    '-optimize',
    // Refuse rather than trim the partial edge blocks a transform cannot move exactly.
    '-perfect',
    ...JPEG_TRANSFORMS[transform],
  ];
  try {
    const result = await runTool(JPEGTRAN.commands[0], args, { ...options, input: bytes, maxStdout: bytes.length * 2 + 1024 * 1024 });
    // Warnings (exit 2) mean damaged data: re-encoding decides what to do with it.
    const isJpeg = result.stdout.length >= 4 && result.stdout[0] === 0xff && result.stdout[1] === 0xd8;
    if (result.exitCode !== JPEGTRAN_EXIT.ok || !isJpeg) return undefined;
    return result.stdout;
  } catch (err) {
    // Without jpegtran, or past its output bound, the image is re-encoded instead.
    if (err instanceof RunFailure && (err.kind === 'spawn-failed' || err.kind === 'output-too-large')) return undefined;
    toolFailure(err, 'jpegtran');
  }
}
