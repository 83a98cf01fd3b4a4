// Filled forms whose values no reader of ours would see. A form saved with NeedAppearances true
// leaves drawing its field values to the viewer, so mupdf, which draws only what the file holds,
// shows and reads the fields empty: the Markdown, and the pages sent to OCR or to a model, would
// lose what was filled in. The MuPDF program tools/engines/mupdf/draw-form-fields.js draws them.
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { timeLeft, type Job } from '../../core/job.js';
import { drawFormFields } from '../../tools/engines/mutool.js';
import { inputsContain } from './common.js';

/**
 * For a form that leaves drawing its field values to the reader, replaces the job's working copy
 * of its first file (in the private job directory; the upload's bytes are untouched) with one
 * that has them drawn, before its pages are rendered. Anything that goes wrong leaves the file
 * as it was: the pages are still right, only without those values. Nothing else stays behind.
 */
export async function drawFormFieldValues(input: Job): Promise<void> {
  const file = input.files[0];
  // Most files have no form: a look for the catalog's /AcroForm key in the raw bytes spares them
  // the mutool run. A catalog packed into a compressed object stream hides it; such a form keeps
  // its fields as mupdf draws them.
  if (!file?.path || !(await inputsContain(input, ['/AcroForm']))) return;
  const drawn = path.join(input.jobDir, `draw-fields-${randomBytes(6).toString('hex')}.pdf`);
  try {
    const drawMs = Math.max(1, Math.min(timeLeft(input) / 4, 20_000));
    if (await drawFormFields(file.path, drawn, { cwd: input.jobDir, timeoutMs: drawMs })) renameSync(drawn, file.path);
  } catch {
    // The original file stands.
  } finally {
    rmSync(drawn, { force: true });
  }
}
