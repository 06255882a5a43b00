#!/usr/bin/env python3
"""Render a terminal screen captured with ANSI colours (tmux capture-pane -e -p) to a PNG.

    scripts/ansi2png.py [--cols N] [--rows N] [--size PX] [--font TTF] IN.ans OUT.png

Handles SGR: reset, bold, dim, italic, underline, blink (ignored), reverse, hidden, strike,
their resets, 8/16 colours, 256 colours (38;5;N / 48;5;N), truecolor (38;2;R;G;B, also the
colon forms) and default fg/bg. Other escape sequences (cursor moves, OSC) are skipped: the
input is a screen dump, one line per row. Wide (East Asian W/F) characters take two cells,
combining marks join the previous cell. Glyphs come from DejaVu Sans Mono (box drawing
included), with fallbacks for characters it lacks. The image is exactly cols x cell width
by rows x cell height, the cell size taken from the font's metrics.

Needs Pillow (Debian: python3-pil) and a monospace TTF (Debian: fonts-dejavu-core).
"""
import argparse
import os
import sys
import unicodedata

from PIL import Image, ImageDraw, ImageFont

DEFAULT_FG = (0xD4, 0xD4, 0xD4)
DEFAULT_BG = (0x1E, 0x1E, 0x1E)

# The 16 ANSI colours, tuned for a dark background.
ANSI16 = [
    (0x00, 0x00, 0x00), (0xCD, 0x31, 0x31), (0x0D, 0xBC, 0x79), (0xE5, 0xE5, 0x10),
    (0x24, 0x72, 0xC8), (0xBC, 0x3F, 0xBC), (0x11, 0xA8, 0xCD), (0xE5, 0xE5, 0xE5),
    (0x66, 0x66, 0x66), (0xF1, 0x4C, 0x4C), (0x23, 0xD1, 0x8B), (0xF5, 0xF5, 0x43),
    (0x3B, 0x8E, 0xEA), (0xD6, 0x70, 0xD6), (0x29, 0xB8, 0xDB), (0xFF, 0xFF, 0xFF),
]

FONT_DIRS = ["/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/dejavu",
             "/usr/share/fonts/TTF", "/usr/local/share/fonts"]
FONT_FILES = {
    (False, False): "DejaVuSansMono.ttf",
    (True, False): "DejaVuSansMono-Bold.ttf",
    (False, True): "DejaVuSansMono-Oblique.ttf",
    (True, True): "DejaVuSansMono-BoldOblique.ttf",
}
# Tried in order for characters the monospace font has no glyph for.
FALLBACK_FILES = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/noto/NotoSansMono-Regular.ttf",
    "/usr/share/fonts/truetype/unifont/unifont.ttf",
]


# DEC special graphics (ESC ( 0, or SO with G1 = 0): what ncurses' ACS line drawing becomes
# in a capture (tmux writes SO ... SI around it).
DEC_GRAPHICS = dict(zip(
    "_`abcdefghijklmnopqrstuvwxyz{|}~",
    "\u00a0\u25c6\u2592\u2409\u240c\u240d\u240a\u00b0\u00b1\u2424\u240b\u2518\u2510\u250c"
    "\u2514\u253c\u23ba\u23bb\u2500\u23bc\u23bd\u251c\u2524\u2534\u252c\u2502\u2264"
    "\u2265\u03c0\u2260\u00a3\u00b7"))


def palette256(n):
    """The xterm 256-colour palette: 16 ANSI, a 6x6x6 cube, 24 greys."""
    if n < 16:
        return ANSI16[n]
    if n < 232:
        n -= 16
        steps = [0, 95, 135, 175, 215, 255]
        return (steps[n // 36], steps[(n // 6) % 6], steps[n % 6])
    g = 8 + 10 * (n - 232)
    return (g, g, g)


class Style:
    __slots__ = ("fg", "bg", "bold", "dim", "italic", "underline", "reverse", "hidden", "strike")

    def __init__(self):
        self.reset()

    def reset(self):
        self.fg = None  # None = default; else an (r, g, b) tuple
        self.bg = None
        self.bold = self.dim = self.italic = self.underline = False
        self.reverse = self.hidden = self.strike = False

    def copy(self):
        s = Style.__new__(Style)
        for k in Style.__slots__:
            setattr(s, k, getattr(self, k))
        return s


def parse_extended_colour(params, i):
    """params[i] is 38/48/58 (already consumed by the caller); parse what follows.
    Returns (colour or None, index of the next unread parameter)."""
    if i >= len(params) or isinstance(params[i], list):
        return None, i
    mode = params[i]
    if any(isinstance(v, list) for v in params[i + 1:i + (2 if mode == 5 else 4)]):
        return None, len(params)
    if mode == 5 and i + 1 < len(params):
        return palette256(max(0, min(255, params[i + 1]))), i + 2
    if mode == 2 and i + 3 < len(params):
        r, g, b = (max(0, min(255, v)) for v in params[i + 1:i + 4])
        return (r, g, b), i + 4
    return None, len(params)  # malformed: drop the rest of the sequence


def apply_sgr(style, body):
    """Apply one SGR sequence (the text between ESC[ and m) to style. Groups are split on ';';
    a group with ':' is one ITU T.416 item (38:2::R:G:B, 38:5:N, 4:3) kept as a list."""
    params = []
    for group in (body.split(";") if body else ["0"]):
        if ":" in group:
            params.append([int(x) if x.isdigit() else 0 for x in group.split(":")])
        else:
            params.append(int(group) if group.isdigit() else 0)
    apply_params(style, params)


def apply_colon(style, sub):
    head = sub[0] if sub else 0
    if head in (38, 48, 58):
        nums = sub[1:]
        if nums and nums[0] == 2 and len(nums) >= 5:  # 38:2:<colour space>:R:G:B
            nums = [2] + nums[2:5]
        colour, _ = parse_extended_colour(nums, 0)
        if head == 38:
            style.fg = colour
        elif head == 48:
            style.bg = colour
    elif head == 4:  # underline style: 0 = none, 1..5 = single, double, curly, ...
        style.underline = (sub[1] if len(sub) > 1 else 1) != 0


def apply_params(style, params):
    i = 0
    while i < len(params):
        p = params[i]
        i += 1
        if isinstance(p, list):
            apply_colon(style, p)
        elif p == 0:
            style.reset()
        elif p == 1:
            style.bold = True
        elif p == 2:
            style.dim = True
        elif p == 3:
            style.italic = True
        elif p in (4, 21):
            style.underline = True
        elif p in (5, 6):
            pass  # blink: a still image cannot
        elif p == 7:
            style.reverse = True
        elif p == 8:
            style.hidden = True
        elif p == 9:
            style.strike = True
        elif p == 22:
            style.bold = style.dim = False
        elif p == 23:
            style.italic = False
        elif p == 24:
            style.underline = False
        elif p == 25:
            pass
        elif p == 27:
            style.reverse = False
        elif p == 28:
            style.hidden = False
        elif p == 29:
            style.strike = False
        elif 30 <= p <= 37:
            style.fg = ANSI16[p - 30]
        elif p == 39:
            style.fg = None
        elif 40 <= p <= 47:
            style.bg = ANSI16[p - 40]
        elif p == 49:
            style.bg = None
        elif 90 <= p <= 97:
            style.fg = ANSI16[p - 90 + 8]
        elif 100 <= p <= 107:
            style.bg = ANSI16[p - 100 + 8]
        elif p in (38, 48, 58):
            colour, i = parse_extended_colour(params, i)
            if p == 38:
                style.fg = colour
            elif p == 48:
                style.bg = colour


def char_width(ch):
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    if unicodedata.east_asian_width(ch) in ("W", "F"):
        return 2
    return 1


def parse_screen(text, cols, rows):
    """Turn the capture into a rows x cols grid of [text, width, Style] (None = continuation
    of a wide character on its left)."""
    blank = Style()
    grid = [[[" ", 1, blank] for _ in range(cols)] for _ in range(rows)]
    style = Style()
    # Character sets: G0 and G1 designations (B = ASCII, 0 = DEC graphics), SO/SI shifting.
    # Like the SGR state, they carry over from one line to the next.
    gsets = ["B", "0"]
    shifted = False
    row = col = 0
    i, n = 0, len(text)
    while i < n and row < rows:
        ch = text[i]
        if ch == "\x1b":
            if i + 1 < n and text[i + 1] == "[":  # CSI: parameters, intermediates, final
                j = i + 2
                while j < n and not ("\x40" <= text[j] <= "\x7e"):
                    j += 1
                if j < n and text[j] == "m":
                    body = text[i + 2:j]
                    if body and body[0] in "<=>?":
                        pass  # private SGR-like sequences: ignore
                    else:
                        apply_sgr(style, body)
                i = j + 1
            elif i + 1 < n and text[i + 1] == "]":  # OSC: up to BEL or ST
                j = i + 2
                while j < n and text[j] != "\x07" and not (text[j] == "\x1b" and
                                                          j + 1 < n and text[j + 1] == "\\"):
                    j += 1
                i = j + (1 if j < n and text[j] == "\x07" else 2)
            elif i + 2 < n and text[i + 1] in "()*+-./":  # designate a character set
                if text[i + 1] in "(-":
                    gsets[0] = text[i + 2]
                elif text[i + 1] in ")":
                    gsets[1] = text[i + 2]
                i += 3
            else:
                i += 2  # any other two-character escape
            continue
        i += 1
        if ch == "\n":
            row += 1
            col = 0
            continue
        if ch == "\r":
            col = 0
            continue
        if ch == "\x0e":  # SO: G1
            shifted = True
            continue
        if ch == "\x0f":  # SI: G0
            shifted = False
            continue
        if gsets[1 if shifted else 0] == "0":
            ch = DEC_GRAPHICS.get(ch, ch)
        if ch == "\t":
            col = min(cols, (col // 8 + 1) * 8)
            continue
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            continue
        w = char_width(ch)
        if w == 0:  # combining: joins the previous cell
            if col > 0:
                prev = col - 1
                if grid[row][prev] is None or grid[row][prev][1] is None:
                    prev -= 1
                if prev >= 0 and grid[row][prev] is not None:
                    grid[row][prev][0] += ch
            continue
        if col + w > cols:
            continue  # past the right edge: dropped, like a terminal without autowrap
        grid[row][col] = [ch, w, style.copy()]
        if w == 2:
            grid[row][col + 1] = [None, None, style.copy()]
        col += w
    return grid


def find_font(name, explicit=None):
    if explicit and os.path.exists(explicit):
        return explicit
    for d in FONT_DIRS:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return p
    return None


class Fonts:
    def __init__(self, size, regular=None):
        self.size = size
        self.faces = {}
        base = find_font(FONT_FILES[(False, False)], regular)
        if not base:
            sys.exit("ansi2png: no DejaVu Sans Mono found (apt-get install fonts-dejavu-core)")
        for key, name in FONT_FILES.items():
            path = regular if (regular and key == (False, False)) else find_font(name)
            self.faces[key] = ImageFont.truetype(path or base, size)
        self.fallbacks = [ImageFont.truetype(p, size) for p in FALLBACK_FILES if os.path.exists(p)]
        self.notdef = {}
        self.cache = {}
        reg = self.faces[(False, False)]
        ascent, descent = reg.getmetrics()
        self.ascent = ascent
        self.cell_h = ascent + descent
        self.cell_w = int(round(reg.getlength("M")))

    def _missing(self, font, ch):
        # A glyph the font lacks renders as its .notdef box: compare with a surely-missing one.
        key = id(font)
        if key not in self.notdef:
            self.notdef[key] = self._ink(font, "\U0010FFFD")
        return self._ink(font, ch) == self.notdef[key]

    def _ink(self, font, ch):
        img = Image.new("L", (self.size * 3, self.size * 2))
        ImageDraw.Draw(img).text((0, 0), ch, font=font, fill=255)
        return img.tobytes()

    def face_for(self, text, bold, italic):
        key = (text, bold, italic)
        if key in self.cache:
            return self.cache[key]
        face = self.faces[(bold, italic)]
        base = text[0]
        if not base.isspace() and self._missing(face, base):
            for fb in self.fallbacks:
                if not self._missing(fb, base):
                    face = fb
                    break
        self.cache[key] = face
        return face


def blend(a, b, t):
    return tuple(int(round(x * (1 - t) + y * t)) for x, y in zip(a, b))


def render(grid, fonts, cols, rows):
    cw, ch = fonts.cell_w, fonts.cell_h
    img = Image.new("RGB", (cols * cw, rows * ch), DEFAULT_BG)
    draw = ImageDraw.Draw(img)
    for r, line in enumerate(grid):
        y = r * ch
        for c, cell in enumerate(line):
            text, w, st = cell
            if text is None:
                continue  # right half of a wide character
            fg = st.fg or DEFAULT_FG
            bg = st.bg or DEFAULT_BG
            if st.reverse:
                fg, bg = bg, fg
            if st.dim:
                fg = blend(fg, bg, 0.45)
            if st.hidden:
                fg = bg
            x = c * cw
            if bg != DEFAULT_BG:
                draw.rectangle([x, y, x + w * cw - 1, y + ch - 1], fill=bg)
            if text != " ":
                face = fonts.face_for(text, st.bold, st.italic)
                if face in fonts.fallbacks or w == 2:
                    # Another font's glyph: centre it in its cells and keep it inside them.
                    gw = face.getlength(text)
                    gx = x + max(0, (w * cw - gw) / 2)
                    draw.text((gx, y + fonts.ascent), text, font=face, fill=fg, anchor="ls")
                else:
                    draw.text((x, y + fonts.ascent), text, font=face, fill=fg, anchor="ls")
            if st.underline:
                uy = y + fonts.ascent + max(1, fonts.size // 10)
                draw.line([x, uy, x + w * cw - 1, uy], fill=fg, width=max(1, fonts.size // 14))
            if st.strike:
                sy = y + fonts.ascent - fonts.cell_h // 4
                draw.line([x, sy, x + w * cw - 1, sy], fill=fg, width=max(1, fonts.size // 14))
    return img


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("input", help="ANSI text (one line per row); - for stdin")
    ap.add_argument("output", help="PNG to write")
    ap.add_argument("--cols", type=int, help="screen width in cells (default: longest line)")
    ap.add_argument("--rows", type=int, help="screen height in rows (default: line count)")
    ap.add_argument("--size", type=int, default=15, help="font size in pixels (default 15)")
    ap.add_argument("--font", help="regular monospace TTF (default DejaVu Sans Mono)")
    args = ap.parse_args()

    if args.input == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(args.input, "rb") as f:
            data = f.read()
    text = data.decode("utf-8", errors="replace")
    if text.endswith("\n"):
        text = text[:-1]
    lines = text.split("\n")
    rows = args.rows or len(lines)
    if args.cols:
        cols = args.cols
    else:
        cols = max((visible_width(l) for l in lines), default=1) or 1
    if cols <= 0 or rows <= 0:
        sys.exit("ansi2png: --cols and --rows must be positive")

    fonts = Fonts(args.size, args.font)
    grid = parse_screen(text, cols, rows)
    img = render(grid, fonts, cols, rows)
    # A palette image is smaller; only when it is lossless (<= 256 colours), since quantizing
    # merges rare colours (one red digit on a screen would turn brown).
    colours = img.getcolors(256)
    if colours:
        pal = Image.new("P", img.size)
        flat = []
        for _, rgb in colours:
            flat.extend(rgb)
        pal.putpalette(flat)
        img = img.quantize(palette=pal, dither=Image.Dither.NONE)
    tmp = args.output + ".tmp"
    img.save(tmp, "PNG", optimize=True)
    os.replace(tmp, args.output)
    return 0


def visible_width(line):
    """Cells a line takes once escape sequences are removed."""
    width, i, n = 0, 0, len(line)
    while i < n:
        if line[i] == "\x1b" and i + 1 < n and line[i + 1] == "[":
            j = i + 2
            while j < n and not ("\x40" <= line[j] <= "\x7e"):
                j += 1
            i = j + 1
            continue
        if line[i] == "\x1b":
            i += 2
            continue
        if ord(line[i]) >= 0x20:
            width += char_width(line[i])
        i += 1
    return width


if __name__ == "__main__":
    sys.exit(main())
