// Filled forms whose values no reader of ours would see. A form saved with NeedAppearances true
// leaves drawing its field values to the viewer, so mupdf, which draws only what the file holds,
// shows and reads the fields empty: the Markdown, and the pages sent to OCR or to a model, would
// lose what was filled in. mupdf makes a field's appearance when its value changes, so each
// filled text field is set to another value and back, then updated.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { timeLeft, type JobInput } from '../contract.js';
import { runTool } from '../runner.js';

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
 * For a form that leaves drawing its field values to the reader, points the job's first file
 * at a copy (in the job directory) with them drawn, for rendering its pages. Anything that goes
 * wrong leaves the file as it was: the pages are still right, only without those values.
 */
export async function drawFormFieldValues(input: JobInput): Promise<void> {
  const file = input.files[0];
  if (!file?.path) return;
  const script = path.join(input.jobDir, 'draw-fields.js');
  const drawn = path.join(input.jobDir, 'fields-drawn.pdf');
  try {
    writeFileSync(script, SCRIPT, { mode: 0o600 });
    const result = await runTool('mutool', ['run', script, file.path, drawn], { cwd: input.jobDir, timeoutMs: Math.max(1, Math.min(timeLeft(input) / 4, 20_000)) });
    if (result.exitCode === 0 && Buffer.from(result.stdout).toString('utf8').trim().endsWith('drawn') && existsSync(drawn)) file.path = drawn;
  } catch {
    // The original file stands.
  }
}
