// mutool run page-check.js <pdf>
// Runs every page's content through a device that draws nothing, as reading its text or drawing
// it would (content streams decoded, operators interpreted, fonts loaded), and prints one JSON
// line: {"pages": P, "unreadable": N}, P the pages MuPDF finds and N the first of them it cannot
// read (1-based), 0 when it reads them all.
var doc = new Document(scriptArgs[0]);
// A password MuPDF asks for where qpdf opened the file without one (damaged encryption): no page is read.
var pages = doc.needsPassword() ? 0 : doc.countPages(), unreadable = 0;
for (var i = 0; i < pages && !unreadable; i++) {
  try { doc.loadPage(i).run({}, Identity); } catch (e) { unreadable = i + 1; }
}
print(JSON.stringify({ pages: pages, unreadable: unreadable }));
