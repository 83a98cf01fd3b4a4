// Filled forms whose values no reader of ours would see. A form saved with NeedAppearances true
// leaves drawing its field values to the viewer, so mupdf, which draws only what the file holds,
// shows and reads the fields empty: the Markdown, and the pages sent to OCR or to a model, would
// lose what was filled in. mupdf makes a field's appearance when its value changes, so each
// filled text field is set to another value and back, then updated.
import { randomBytes } from 'node:crypto';
import { existsSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { timeLeft, type Job } from '../../core/job.js';
import { runTool } from '../../tools/process/run-tool.js';
import { inputsContain } from './common.js';

/** mutool-run JavaScript: defines `needAppearances` for `doc` and `drawFieldValues(page)`. */
export const DRAW_FIELD_VALUES_JS = `
var needAppearances = false;
try { needAppearances = String(doc.getTrailer().get('Root').get('AcroForm').get('NeedAppearances')) === 'true'; } catch (e) {}
function drawFieldValues(page) {
  var widgets = page.getWidgets();
  for (var k = 0; k < widgets.length; k++) {
    try {
      var value = widgets[k].getFieldType() === 'text' ? widgets[k].getValue() : '';
      if (!value) continue;
      widgets[k].setTextValue(value + ' ');
      widgets[k].setTextValue(value);
      widgets[k].update();
    } catch (e) {}
  }
}
`;

// scriptArgs: pdf, output. Prints "drawn" after saving a copy with the values drawn, else "unchanged".
const SCRIPT = `
var doc = new Document(scriptArgs[0]);
${DRAW_FIELD_VALUES_JS}
if (!needAppearances) { print('unchanged'); quit(); }
for (var i = 0; i < doc.countPages(); i++) { try { drawFieldValues(doc.loadPage(i)); } catch (e) {} }
doc.save(scriptArgs[1], 'compress');
print('drawn');
`;

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
  const script = path.join(input.jobDir, `draw-fields-${randomBytes(6).toString('hex')}.js`);
  const drawn = `${script}.pdf`;
  try {
    writeFileSync(script, SCRIPT, { mode: 0o600 });
    const result = await runTool('mutool', ['run', script, file.path, drawn], { cwd: input.jobDir, timeoutMs: Math.max(1, Math.min(timeLeft(input) / 4, 20_000)) });
    if (result.exitCode === 0 && Buffer.from(result.stdout).toString('utf8').trim().endsWith('drawn') && existsSync(drawn)) renameSync(drawn, file.path);
  } catch {
    // The original file stands.
  } finally {
    rmSync(script, { force: true });
    rmSync(drawn, { force: true });
  }
}
