// mutool run count-navigation.js <pdf>
// Prints {"outline": N, "links": N}: the outline entries (all levels) and the links on every
// page, counted with mupdf's own document model, so a rewritten file can be compared with its
// source (Ghostscript drops some outline entries).
var doc = new Document(scriptArgs[0]);
function count(items) { var n = 0; if (!items) return 0; for (var i = 0; i < items.length; i++) n += 1 + count(items[i].down); return n; }
var links = 0; var pages = doc.countPages();
for (var i = 0; i < pages; i++) links += doc.loadPage(i).getLinks().length;
print(JSON.stringify({ outline: count(doc.loadOutline()), links: links }));
