// mutool run merge-outline.js <merged> <output> (<pages> <source>)...
// Appends the outlines of every source after the first to qpdf's merged file. The arguments are
// the merged file, where to write, then each source's page count as qpdf counted it (-1:
// unknown) and its path. It reads the outline of every input after the first (title,
// destination as a "#page=N&..." URI, open or closed, children), moves each internal destination
// by the pages before that input, and appends the entries after the first input's outline
// (which qpdf already kept exactly) as an incremental update, so qpdf's packing of the file is
// untouched. Prints what it did as JSON on its last line: {"entries": N}.
//
// - An entry whose destination does not resolve (unknown named destination, JavaScript, a page
//   outside that input) keeps its title and children, with no destination.
// - External URIs stay URI actions. mupdf reads /XYZ zoom 0 ("keep the reader's zoom", what
//   Word and LibreOffice write) as 100 %; it is written back as null, which means the same.
// - mupdf 1.21's OutlineIterator.item() hands out strings that the next item() call frees,
//   so they are copied at once.
var merged = scriptArgs[0], output = scriptArgs[1];
function open(file) {
  var doc = new PDFDocument(file);
  if (doc.needsPassword() && !doc.authenticatePassword('')) throw new Error('needs a password');
  return doc;
}
function copy(s) { return s ? ('.' + s).slice(1) : null; }
function readIterator(doc) {
  var it = doc.outlineIterator();
  function level() {
    var items = [];
    for (;;) {
      var item = it.item();
      if (!item) break;
      var node = { title: copy(item.title) || '', uri: copy(item.uri), open: !!item.open, down: [] };
      if (it.down() === 0) node.down = level();
      it.up();
      items.push(node);
      if (it.next() !== 0) break;
    }
    return items;
  }
  return level();
}
function readLoaded(items) {
  var out = [];
  for (var i = 0; items && i < items.length; i++)
    out.push({ title: items[i].title || '', uri: items[i].uri || null, open: false, down: readLoaded(items[i].down) });
  return out;
}
function read(doc) {
  try { return readIterator(doc); } catch (e) { return readLoaded(doc.loadOutline()); }
}
function count(items) { var n = 0; for (var i = 0; i < items.length; i++) n += 1 + count(items[i].down); return n; }
function relocate(uri, offset, pages) {
  if (!uri) return null;
  if (/^[A-Za-z][A-Za-z0-9+.-]*:/.test(uri)) return uri;
  var m = /^#page=([0-9]+)((?:&[^#]*)?)$/.exec(uri);
  if (!m) return null;
  var page = parseInt(m[1], 10);
  if (page < 1 || page > pages) return null;
  return '#page=' + (page + offset) + m[2].replace(/^&zoom=100,/, '&zoom=nan,');
}
var inputs = [], offset = 0, entries = 0;
for (var i = 2; i + 1 < scriptArgs.length; i += 2) {
  var given = parseInt(scriptArgs[i], 10), items = [], pages = given, later = inputs.length > 0;
  if (later || given < 0) {
    try {
      var src = open(scriptArgs[i + 1]);
      var counted = src.countPages();
      if (given < 0) pages = counted;
      // A source whose pages mupdf counts differently from qpdf cannot be mapped onto the merge.
      if (later && counted === pages) items = read(src);
    } catch (e) { items = []; }
  }
  if (pages < 0) throw new Error('unknown page count');
  inputs.push({ items: items, offset: offset, pages: pages });
  entries += count(items);
  offset += pages;
}
if (entries === 0) { print(JSON.stringify({ entries: 0 })); quit(); }
var doc = open(merged);
if (doc.countPages() !== offset) throw new Error('the merged file has ' + doc.countPages() + ' pages, not ' + offset);
var it = doc.outlineIterator();
if (it.item()) { while (it.next() === 0) { /* to the last top-level entry */ } }
function write(items, input) {
  for (var k = 0; k < items.length; k++) {
    var entry = { title: items[k].title, uri: relocate(items[k].uri, input.offset, input.pages), open: items[k].open };
    it.insert(entry);
    if (items[k].down.length) {
      it.prev();
      it.down();
      write(items[k].down, input);
      it.up();
      it.update(entry);
      it.next();
    }
  }
}
for (var j = 1; j < inputs.length; j++) write(inputs[j].items, inputs[j]);
doc.save(output, 'incremental');
var check = new PDFDocument(output);
if (check.countPages() !== offset) throw new Error('the saved file lost pages');
print(JSON.stringify({ entries: entries }));
