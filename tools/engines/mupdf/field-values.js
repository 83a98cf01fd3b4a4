// A module for the other programs here (loaded with mutool's require): filled form fields that
// no reader of ours would see. A form saved with NeedAppearances true leaves drawing its field
// values to the viewer, so mupdf, which draws only what the file holds, shows and reads the
// fields empty. mupdf makes a field's appearance when its value changes, so each filled text
// field is set to another value and back, then updated.

/** Whether the document asks its viewer to draw the fields' values. */
exports.needAppearances = function (doc) {
  try {
    return String(doc.getTrailer().get('Root').get('AcroForm').get('NeedAppearances')) === 'true';
  } catch (e) {
    return false;
  }
};

/** Gives every filled text field on the page an appearance that shows its value. */
exports.drawFieldValues = function (page) {
  var widgets = page.getWidgets();
  for (var k = 0; k < widgets.length; k++) {
    try {
      var value = widgets[k].getFieldType() === 'text' ? widgets[k].getValue() : '';
      if (!value) continue;
      widgets[k].setTextValue(value + ' ');
      widgets[k].setTextValue(value);
      widgets[k].update();
    } catch (e) {
      // A widget mupdf cannot update keeps the appearance it had.
    }
  }
};
