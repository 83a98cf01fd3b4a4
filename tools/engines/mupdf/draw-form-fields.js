// mutool run draw-form-fields.js <pdf> <output>
// For a form that leaves drawing its field values to the viewer (see field-values.js), saves a
// copy with the values drawn and prints "drawn"; otherwise prints "unchanged" and writes nothing.
var fields = require(scriptPath.replace(/[^/]*$/, '') + 'field-values');

var doc = new Document(scriptArgs[0]);
if (!fields.needAppearances(doc)) { print('unchanged'); quit(); }
for (var i = 0; i < doc.countPages(); i++) {
  try { fields.drawFieldValues(doc.loadPage(i)); } catch (e) { /* that page keeps its fields as they were */ }
}
doc.save(scriptArgs[1], 'compress');
print('drawn');
