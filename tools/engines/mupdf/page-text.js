// mutool run page-text.js <pdf> <first> <last> <stext file>
// Reads pages first..last (1-based) of the PDF: writes mupdf's structured text (glyphs with fonts
// and boxes) to the stext file and prints, for a password-protected file, "ENCRYPTED", else one
// JSON array with [links, boxes, imageCover, images] per page: links as [[x0, y0, x1, y1], uri], boxes as
// [x0, y0, x1, y1] of every straight-edged filled path and of every straight segment of a stroked
// path (stroke width included). Curved fills are skipped: rules and cell borders are straight. A
// page with a huge drawing stops recording after a cap so maps and charts cannot slow the program
// down much. imageCover is the share of the page's area under drawn images (each image's box
// clipped to the page, summed, at most 1): a scan wrapped in a PDF is one image the size of the page.
// images are the boxes of those drawn images, clipped to the page (the first 500).
var fields = require(scriptPath.replace(/[^/]*$/, '') + 'field-values');
var doc = new Document(scriptArgs[0]);
if (doc.needsPassword()) { print('ENCRYPTED'); quit(); }
var first = parseInt(scriptArgs[1], 10) - 1, last = parseInt(scriptArgs[2], 10) - 1;
var writer = new DocumentWriter(scriptArgs[3], 'stext', '');
var out = [];
function r1(v) { return Math.round(v * 10) / 10; }
// Filled fields of a form that leaves drawing them to the reader (see field-values.js).
var needAppearances = fields.needAppearances(doc);
for (var i = first; i <= last && i < doc.countPages(); i++) {
  var page = doc.loadPage(i);
  if (needAppearances) { try { fields.drawFieldValues(page); } catch (e) { /* the page is read as it is */ } }
  var dev = writer.beginPage(page.bound());
  page.run(dev, Identity);
  writer.endPage();
  var links = page.getLinks(), uris = [];
  for (var j = 0; j < links.length; j++) {
    var uri = links[j].uri;
    if (typeof uri === 'string' && /^(https?:|mailto:|ftp:)/i.test(uri)) uris.push([links[j].bounds, uri]);
  }
  var boxes = [];
  var box = function (path, ctm, width) {
    if (boxes.length > 4000) return;
    var x0 = 1e9, y0 = 1e9, x1 = -1e9, y1 = -1e9, curved = false;
    var at = function (x, y) {
      var X = x * ctm[0] + y * ctm[2] + ctm[4], Y = x * ctm[1] + y * ctm[3] + ctm[5];
      if (X < x0) x0 = X; if (X > x1) x1 = X; if (Y < y0) y0 = Y; if (Y > y1) y1 = Y;
    };
    path.walk({ moveTo: at, lineTo: at, curveTo: function () { curved = true; }, closePath: function () {} });
    if (curved || x0 > x1) return;
    var h = width / 2;
    boxes.push([r1(x0 - h), r1(y0 - h), r1(x1 + h), r1(y1 + h)]);
  };
  // A stroked outline (a cell border drawn as one rectangle) is its edges, not its area.
  var edges = function (path, ctm, width) {
    var h = width / 2, sx = 0, sy = 0, cx = 0, cy = 0;
    // The edge from the current point to (X, Y), in page space; (X, Y) becomes the current point.
    var edgeTo = function (X, Y) {
      if (boxes.length <= 4000) {
        boxes.push([r1(Math.min(cx, X) - h), r1(Math.min(cy, Y) - h), r1(Math.max(cx, X) + h), r1(Math.max(cy, Y) + h)]);
      }
      cx = X; cy = Y;
    };
    var to = function (x, y) { edgeTo(x * ctm[0] + y * ctm[2] + ctm[4], x * ctm[1] + y * ctm[3] + ctm[5]); };
    path.walk({
      moveTo: function (x, y) { cx = sx = x * ctm[0] + y * ctm[2] + ctm[4]; cy = sy = x * ctm[1] + y * ctm[3] + ctm[5]; },
      lineTo: to,
      curveTo: function (a, b, c, d, x, y) { cx = x * ctm[0] + y * ctm[2] + ctm[4]; cy = x * ctm[1] + y * ctm[3] + ctm[5]; },
      closePath: function () { if (cx !== sx || cy !== sy) edgeTo(sx, sy); },
    });
  };
  var bound = page.bound(), pageArea = (bound[2] - bound[0]) * (bound[3] - bound[1]), imageArea = 0, images = [];
  var image = function (ctm) {
    var xs = [ctm[4], ctm[0] + ctm[4], ctm[2] + ctm[4], ctm[0] + ctm[2] + ctm[4]];
    var ys = [ctm[5], ctm[1] + ctm[5], ctm[3] + ctm[5], ctm[1] + ctm[3] + ctm[5]];
    var x0 = Math.max(bound[0], Math.min.apply(null, xs)), x1 = Math.min(bound[2], Math.max.apply(null, xs));
    var y0 = Math.max(bound[1], Math.min.apply(null, ys)), y1 = Math.min(bound[3], Math.max.apply(null, ys));
    var w = x1 - x0, h = y1 - y0;
    if (w > 0 && h > 0) {
      imageArea += w * h;
      if (images.length < 500) images.push([r1(x0), r1(y0), r1(x1), r1(y1)]);
    }
  };
  page.run({
    fillImage: function (img, ctm, alpha) { if (alpha > 0.1) image(ctm); },
    fillImageMask: function (img, ctm, cs, color, alpha) { if (alpha > 0.1) image(ctm); },
    fillPath: function (path, evenOdd, ctm, cs, color, alpha) { if (alpha > 0.1) box(path, ctm, 0); },
    strokePath: function (path, stroke, ctm, cs, color, alpha) {
      if (alpha > 0.1 && boxes.length <= 4000) edges(path, ctm, stroke.lineWidth * Math.sqrt(Math.abs(ctm[0] * ctm[3] - ctm[1] * ctm[2])));
    },
  }, Identity);
  out.push([uris, boxes, pageArea > 0 ? Math.round(Math.min(1, imageArea / pageArea) * 100) / 100 : 0, images]);
}
writer.close();
print(JSON.stringify(out));
