// mutool run page-check.js <pdf>
// Runs every page's content through a device that draws nothing, as reading its text or drawing
// it would (content streams decoded, operators interpreted, fonts loaded), and prints one JSON
// line: {"unreadable": N}, N the first page MuPDF cannot read (1-based), or 0 when it reads them all.
var doc = new Document(scriptArgs[0]);
var unreadable = 0;
for (var i = 0; i < doc.countPages() && !unreadable; i++) {
  try { doc.loadPage(i).run({}, Identity); } catch (e) { unreadable = i + 1; }
}
print(JSON.stringify({ unreadable: unreadable }));
