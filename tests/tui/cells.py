#!/usr/bin/env python3
"""Reads `tmux capture-pane -p -e` on stdin and answers about the cells' attributes.

  cells.py runs ATTR     each run of text drawn with ATTR (bold, dim, underline, reverse) as
                         ROW:TEXT, rows from 0
  cells.py colours       each colour SGR code in use (foreground or background other than the
                         terminal's default), once, sorted
  cells.py tab           the selected session's tab on show: of the tab names on the detail
                         pane's top border (row 1, right of the sessions pane's corner), the
                         one drawn unlike all the others; nothing when none is (yet) unique

One SGR state machine for the dashboard tests, so that a test asserts on what the terminal
shows (attributes per cell), not on the byte order tmux happens to print.
"""
import re
import sys

ATTRS = {"1": "bold", "2": "dim", "4": "underline", "7": "reverse"}
OFF = {"22": ("bold", "dim"), "24": ("underline",), "27": ("reverse",)}


# The line-drawing characters a terminal without UTF-8 draws from its alternate character set
# (tmux's capture -e wraps them in SO ... SI), as the Unicode ones a UTF-8 terminal gets.
ACS = dict(zip("jklmnqtuvwx", "\u2518\u2510\u250c\u2514\u253c\u2500\u251c\u2524\u2534\u252c\u2502"))


def unacs(screen):
    """The capture with its SO ... SI runs (which may span lines) as Unicode box drawing."""
    out, acs = [], False
    for part in re.split(r"(\x1b\[[0-9;:]*m|\x0e|\x0f)", screen):
        if part == "\x0e":
            acs = True
        elif part == "\x0f":
            acs = False
        elif acs and not part.startswith("\x1b"):
            out.append("".join(ACS.get(ch, ch) for ch in part))
        else:
            out.append(part)
    return "".join(out)


def parse(screen):
    """Yields (row, text, attrs, colours) for each run of cells with one look."""
    screen = unacs(screen)
    attrs, colours = set(), set()
    for row, line in enumerate(screen.split("\n")):
        pos = 0
        for m in re.finditer(r"\x1b\[([0-9;:]*)m", line):
            if m.start() > pos:
                yield row, line[pos : m.start()], frozenset(attrs), frozenset(colours)
            pos = m.end()
            codes = m.group(1).replace(":", ";").split(";") if m.group(1) else ["0"]
            i = 0
            while i < len(codes):
                c = codes[i] or "0"
                if c == "0":
                    attrs.clear()
                    colours.clear()
                elif c in ATTRS:
                    attrs.add(ATTRS[c])
                elif c in OFF:
                    attrs.difference_update(OFF[c])
                elif c in ("39", "49"):
                    colours = {x for x in colours if not x.startswith("fg" if c == "39" else "bg")}
                elif c in ("38", "48"):
                    # 38;5;N or 38;2;R;G;B: one colour, its parameters consumed here
                    n = 3 if i + 1 < len(codes) and codes[i + 1] == "5" else 5
                    colours.add(("fg" if c == "38" else "bg") + ";".join(codes[i : i + n]))
                    i += n - 1
                elif re.fullmatch(r"3[0-7]|9[0-7]", c):
                    colours.add("fg" + c)
                elif re.fullmatch(r"4[0-7]|10[0-7]", c):
                    colours.add("bg" + c)
                i += 1
        if pos < len(line):
            yield row, line[pos:], frozenset(attrs), frozenset(colours)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    screen = sys.stdin.read()
    if sys.argv[1] == "runs" and len(sys.argv) == 3:
        want, out, last = sys.argv[2], [], None
        for row, text, attrs, _ in parse(screen):
            if want in attrs and last and last[0] == row and last[2]:
                out[-1] = (row, out[-1][1] + text)
            elif want in attrs:
                out.append((row, text))
            last = (row, text, want in attrs)
        for row, text in out:
            print(f"{row}:{text}")
    elif sys.argv[1] == "colours":
        used = set()
        for _, text, _, colours in parse(screen):
            if text.strip(" "):
                used |= colours
            elif any(c.startswith("bg") for c in colours):
                used |= {c for c in colours if c.startswith("bg")}
        for c in sorted(used):
            print(c)
    elif sys.argv[1] == "tab":
        looks = []  # (character, look) of each cell of row 1
        for row, text, attrs, colours in parse(screen):
            if row == 1:
                looks += [(ch, (attrs, colours)) for ch in text]
        line = "".join(ch for ch, _ in looks)
        i = line.find("\u2510\u250c")  # the sessions pane's top-right corner, then ours
        if i < 0:
            return
        i += 2
        # words between blanks and box-drawing characters: the session's name when there is
        # room for it (a narrow bar leaves it out), then the tabs, all drawn alike but the one
        # on show
        words = [(m.group(), looks[i + m.start()][1])
                 for m in re.finditer(r"[^\s\u2500-\u257f]+", line[i:])]
        odd = [w for w, look in words if sum(1 for _, l in words if l == look) == 1]
        if len(words) >= 4 and len(odd) == 2:  # the session's name, then the tab
            print(odd[1])
        elif len(words) >= 3 and len(odd) == 1:  # the tab alone
            print(odd[0])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
