#!/usr/bin/env python3
"""scripts/ansi2png.py, the screenshots' renderer: a known capture with colours is rendered
through the command line and the PNG's pixels are read back at known cells (16, 256 and RGB
colours, both SGR forms, reverse, underline, bold, DEC line drawing, a wide character, the
state carried from one line to the next, reset).

    tests/tui/test_ansi2png.py PATH/TO/scripts/ansi2png.py

Needs Pillow (python3-pil) and DejaVu Sans Mono (fonts-dejavu-core): without them it fails,
or skips (exit 77) with PADDOCK_ALLOW_SKIP=1.
"""
import os
import subprocess
import sys
import tempfile
import unittest

RENDERER = None
COLS, ROWS = 12, 4

# Row 0: one thing per cell (C = the cell's column):
#  0 red (ANSI 31) full block      1 bg 256-colour 196          2 bg RGB 10,20,30
#  3 reverse space                 4 fg 256-colour 46 block     5 fg 38:2::R:G:B block
#  6 underlined space              7 DEC graphics 'q' (a horizontal line)
#  8-9 a wide character            10 bg ANSI 44 (after the wide one: column 10)
#  11 bright fg (ANSI 95) block
ROW0 = ("\x1b[31m\u2588\x1b[0m"
        "\x1b[48;5;196m \x1b[0m"
        "\x1b[48;2;10;20;30m \x1b[0m"
        "\x1b[7m \x1b[27m"
        "\x1b[38;5;46m\u2588\x1b[39m"
        "\x1b[38:2::200:100:50m\u2588\x1b[0m"
        "\x1b[4m \x1b[24m"
        "\x1b(0q\x1b(B"
        "\u65e5"
        "\x1b[44m \x1b[49m"
        "\x1b[95m\u2588\x1b[0m")
# Row 1: the bg set at the end of row 0 is gone (reset), a bg set here carries to row 2.
ROW1 = "\x1b[42m  "
# Row 2: still green bg for two cells, then reset; 'M' plain and 'M' bold at 4 and 6.
ROW2 = "  \x1b[0m  M \x1b[1mM\x1b[0m"
ROW3 = "plain"
CAPTURE = "\n".join([ROW0, ROW1, ROW2, ROW3]) + "\n"

DEFAULT_FG = (0xD4, 0xD4, 0xD4)
DEFAULT_BG = (0x1E, 0x1E, 0x1E)


class Rendered(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from PIL import Image
        cls.tmp = tempfile.TemporaryDirectory()
        ans = os.path.join(cls.tmp.name, "in.ans")
        png = os.path.join(cls.tmp.name, "out.png")
        with open(ans, "w", encoding="utf-8") as f:
            f.write(CAPTURE)
        subprocess.run([sys.executable, RENDERER, "--cols", str(COLS), "--rows", str(ROWS),
                        ans, png], check=True)
        cls.img = Image.open(png).convert("RGB")
        cls.cw = cls.img.width // COLS
        cls.ch = cls.img.height // ROWS

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def centre(self, col, row):
        return self.img.getpixel((col * self.cw + self.cw // 2, row * self.ch + self.ch // 2))

    def cell_pixels(self, col, row):
        return [self.img.getpixel((x, y))
                for y in range(row * self.ch, (row + 1) * self.ch)
                for x in range(col * self.cw, (col + 1) * self.cw)]

    def ink(self, col, row):
        return sum(1 for p in self.cell_pixels(col, row) if p != DEFAULT_BG)

    def test_size_is_the_grid(self):
        self.assertEqual(self.img.width, COLS * self.cw)
        self.assertEqual(self.img.height, ROWS * self.ch)
        self.assertGreater(self.cw, 4)
        self.assertGreater(self.ch, self.cw)

    def test_16_colour_foreground(self):
        self.assertEqual(self.centre(0, 0), (0xCD, 0x31, 0x31))

    def test_bright_foreground(self):
        self.assertEqual(self.centre(11, 0), (0xD6, 0x70, 0xD6))

    def test_256_colour_background(self):
        self.assertEqual(self.centre(1, 0), (255, 0, 0))

    def test_rgb_background(self):
        self.assertEqual(self.centre(2, 0), (10, 20, 30))

    def test_reverse_swaps_default_colours(self):
        self.assertEqual(self.centre(3, 0), DEFAULT_FG)

    def test_256_colour_foreground_cube(self):
        self.assertEqual(self.centre(4, 0), (0, 255, 0))

    def test_rgb_foreground_colon_form(self):
        self.assertEqual(self.centre(5, 0), (200, 100, 50))

    def test_underline_draws_a_line_in_the_foreground(self):
        pixels = self.cell_pixels(6, 0)
        self.assertIn(DEFAULT_FG, pixels)  # the underline
        self.assertEqual(self.centre(6, 0), DEFAULT_BG)  # a space: nothing at its middle

    def test_dec_graphics_line(self):
        # 'q' in the DEC set is a horizontal line: ink across the whole cell's width on one
        # row, which the letter q never has.
        rows = {}
        for y in range(self.ch):
            rows[y] = sum(1 for x in range(self.cw)
                          if self.img.getpixel((7 * self.cw + x, y)) != DEFAULT_BG)
        self.assertEqual(max(rows.values()), self.cw)

    def test_wide_character_takes_two_cells(self):
        self.assertGreater(self.ink(8, 0) + self.ink(9, 0), 0)
        self.assertEqual(self.centre(10, 0), (0x24, 0x72, 0xC8))  # ANSI 44 at column 10

    def test_background_carries_to_the_next_line_until_reset(self):
        self.assertEqual(self.centre(0, 1), (0x0D, 0xBC, 0x79))
        self.assertEqual(self.centre(1, 2), (0x0D, 0xBC, 0x79))
        self.assertEqual(self.centre(2, 2), DEFAULT_BG)
        self.assertEqual(self.centre(2, 1), DEFAULT_BG)  # past the text of row 1: untouched

    def test_bold_is_heavier(self):
        self.assertGreater(self.ink(6, 2), self.ink(4, 2))
        self.assertGreater(self.ink(4, 2), 0)

    def test_plain_text_in_the_default_colour(self):
        self.assertIn(DEFAULT_FG, self.cell_pixels(0, 3))
        self.assertEqual(self.ink(6, 3), 0)  # after "plain": blank


def main():
    global RENDERER
    if len(sys.argv) < 2 or not os.path.exists(sys.argv[1]):
        print("usage: test_ansi2png.py PATH/TO/scripts/ansi2png.py", file=sys.stderr)
        return 2
    RENDERER = sys.argv[1]
    try:
        import PIL  # noqa: F401
        missing = not os.path.exists("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf")
    except ImportError:
        missing = True
    if missing:
        why = "the renderer needs python3-pil and fonts-dejavu-core (scripts/lib.sh installs them)"
        if os.environ.get("PADDOCK_ALLOW_SKIP") == "1":
            print(f"SKIP: {why}", file=sys.stderr)
            return 77
        print(f"FAIL: {why} (PADDOCK_ALLOW_SKIP=1 to skip instead)", file=sys.stderr)
        return 1
    result = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
