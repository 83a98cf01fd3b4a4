"""Typesets the HTML document read from stdin as PDF on stdout with WeasyPrint, fetching nothing.

Run as `python3 -I render.py` (tools/engines/weasyprint.ts) from TMPDIR set to a private job directory. The HTML comes
from the service's own Markdown renderer, but this script does not trust that: every URL
WeasyPrint would load (images, stylesheets, @import, @font-face, SVG references, attachments,
http(s)://, file://, data:) goes through a fetcher that refuses, so no input can trigger a
network request or a local file read. The `weasyprint` command cannot be given a fetcher,
which is why this script exists.

Fonts: only the DejaVu Sans and Sans Mono faces below are visible to fontconfig, so the output
does not depend on what else the machine has installed. Characters none of them can draw (CJK, Thai,
Devanagari, ...) would otherwise vanish silently; they are replaced by U+FFFD so the loss is
visible on the page and in the text layer.
"""
import logging
import os
import resource
import sys
import unicodedata
from xml.sax.saxutils import escape

FONT_DIR = '/usr/share/fonts/truetype/dejavu'
# Upright faces come from fonts-dejavu-core, oblique ones from fonts-dejavu-extra. WeasyPrint 57
# does not synthesise oblique type: without the extra package, emphasis is drawn upright.
FONT_FILES = tuple(
    name for name in (
        'DejaVuSans.ttf', 'DejaVuSans-Bold.ttf', 'DejaVuSans-Oblique.ttf', 'DejaVuSans-BoldOblique.ttf',
        'DejaVuSansMono.ttf', 'DejaVuSansMono-Bold.ttf', 'DejaVuSansMono-Oblique.ttf', 'DejaVuSansMono-BoldOblique.ttf',
    )
    if os.path.exists(os.path.join(FONT_DIR, name))
)
REPLACEMENT = '\ufffd'
# A 263-page text document peaks near 250 MB; a table of tens of thousands of rows would grow
# past a gigabyte. Past this cap the script stops with OUT_OF_MEMORY instead of starving the host.
ADDRESS_SPACE_LIMIT = 1536 * 1024 * 1024
OUT_OF_MEMORY = 3
# Controls, format characters (ZWJ, bidi marks) and separators are laid out, not drawn;
# variation selectors refine the glyph before them. None of them needs a glyph of its own.
INVISIBLE_CATEGORIES = ('Cc', 'Cf', 'Zs', 'Zl', 'Zp')


def is_variation_selector(code_point):
    return 0xFE00 <= code_point <= 0xFE0F or 0xE0100 <= code_point <= 0xE01EF


def restrict_fontconfig(work_dir):
    accepted = ''.join(f'<glob>{FONT_DIR}/{name}</glob>' for name in FONT_FILES)
    config = (
        '<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">\n<fontconfig>'
        f'<dir>{FONT_DIR}</dir>'
        '<cachedir>/var/cache/fontconfig</cachedir>'
        f'<cachedir>{escape(work_dir)}/fontconfig-cache</cachedir>'
        f'<selectfont><acceptfont>{accepted}</acceptfont><rejectfont><glob>*</glob></rejectfont></selectfont>'
        '</fontconfig>\n'
    )
    path = os.path.join(work_dir, 'fonts.conf')
    with open(path, 'w', encoding='utf-8') as handle:
        handle.write(config)
    # Read by fontconfig when WeasyPrint (through Pango) first initialises it, so before the import.
    os.environ['FONTCONFIG_FILE'] = path


def covered_code_points():
    from fontTools.ttLib import TTFont
    covered = set()
    for name in FONT_FILES:
        font = TTFont(os.path.join(FONT_DIR, name), lazy=True)
        covered.update(font.getBestCmap().keys())
        font.close()
    return covered


def replace_undrawable(text, covered):
    missing = {
        ord(char): REPLACEMENT
        for char in set(text)
        if ord(char) not in covered
        and unicodedata.category(char) not in INVISIBLE_CATEGORIES
        and not is_variation_selector(ord(char))
    }
    return text.translate(missing) if missing else text


def refuse_every_url(url, timeout=10, ssl_context=None):
    # The URL is not repeated: it came from the input.
    raise ValueError('this renderer loads no external resources')


def main():
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))
    work_dir = os.environ.get('TMPDIR') or os.getcwd()
    restrict_fontconfig(work_dir)
    # Warnings name URLs and CSS from the document; nothing here needs them.
    logging.getLogger('weasyprint').setLevel(logging.CRITICAL)
    from weasyprint import HTML

    html = sys.stdin.buffer.read().decode('utf-8')
    # Only the body is drawn; the head holds the title metadata, which keeps every character.
    head, separator, body = html.partition('<body')
    if separator:
        html = head + separator + replace_undrawable(body, covered_code_points())
    document = HTML(string=html, base_url=None, url_fetcher=refuse_every_url, media_type='print')
    sys.stdout.buffer.write(document.write_pdf())
    sys.stdout.buffer.flush()


if __name__ == '__main__':
    try:
        main()
    except MemoryError:
        sys.exit(OUT_OF_MEMORY)
