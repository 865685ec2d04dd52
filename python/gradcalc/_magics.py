"""The notebook magics: ``%%gradcalc`` cells and the ``%gradcalc`` line magic
run gradcalc statements in the notebook's one session (``gradcalc.session()``)
and show what they give as a notebook shows it:

- text as the terminal shows it, its colours as HTML (``<pre>``), with the
  plain text beside it (``text/plain``);
- ``:svg`` and ``:plot`` (without a file, or with ``-``): the picture
  (``image/svg+xml``);
- ``:html -``, ``:html`` and ``:show``: the step-through page in a sandboxed
  iframe (``text/html``);
- ``:trace md``: the table as Markdown (``text/markdown``);
- an error: its report with the caret and help as the cell's error output
  (``gradcalc.Error``, its fields read from the error's JSON event), and the
  cell fails;
- Ctrl-C (the kernel's interrupt): what ran before it, an interrupted
  ``:repeat`` or ``:descend`` saying how many steps it kept, then the cell
  fails with ``KeyboardInterrupt``.

Which commands show in the cell rather than write a file is read from the
library's command table (``_gradcalc.cell_source``), not from their names.
"""

import html

from . import _ANSI, Error, _error_in, _gradcalc, iframe, session

# The colours of the terminal's text in a notebook: for each colour name the
# printer's SGR codes give (30–37, and 90–97 bright), the CSS colour on a light
# theme and on a dark one. The dark ones are the playground's
# (web/playground.css); the light ones are the same hues darkened. Every one
# has a WCAG contrast of at least 4.5:1 on its theme's background (white;
# JupyterLab's dark #111111 and #212121, VS Code's #1e1e1e): the xterm
# colours the terminal shows (green #0dbc79 is 2.47:1 on white) are not.
# No single colour can be 4.5:1 on both white and #111 (the two ratios
# multiply to 18.9 < 4.5²), so the dark ones are switched in by the
# notebook's theme (``_DARK_CSS``); where that style is not kept (an
# untrusted notebook's sanitiser), the light colours stay. Black and white
# (30, 37) are the theme's own text colour.
PALETTE = {
    "red": ("#b3261e", "#ff8c69"),
    "green": ("#0b5cad", "#7fd4ff"),
    "yellow": ("#7a5d00", "#f0e442"),
    "blue": ("#1f4fbf", "#8ab4ff"),
    "magenta": ("#8e2f86", "#e0a0d0"),
    "cyan": ("#006b63", "#6fe0d0"),
    "grey": ("#5f5f5f", "#a8a8a8"),
    "dim": ("#616161", "#b0b0b0"),
}

# The SGR colour numbers 0–7 by name (None: the theme's text colour).
_NAMES = [None, "red", "green", "yellow", "blue", "magenta", "cyan", None]

# The selectors of a dark notebook theme: JupyterLab and Notebook 7
# (``data-jp-theme-light``), VS Code, Colab.
_DARK_THEMES = [
    'body[data-jp-theme-light="false"]',
    "body.vscode-dark",
    "body.vscode-high-contrast:not(.vscode-high-contrast-light)",
    'html[theme="dark"]',
]

_DARK_CSS = "".join(
    ", ".join(f"{theme} .gradcalc .gc-{name}" for theme in _DARK_THEMES)
    + f" {{ color: {dark} !important; }}"
    for name, (_, dark) in PALETTE.items()
)

# The xterm colours of the 256-colour codes 0–15 (38;5;n), which gradcalc
# does not write; kept for text from elsewhere.
_COLOURS = [
    "#000000", "#cd3131", "#0dbc79", "#e5e510", "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5",
    "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff",
]


def _colour256(n):
    """xterm's colour ``n`` of 256 as CSS."""
    if n < 16:
        return _COLOURS[n]
    if n < 232:
        n -= 16
        levels = [0, 95, 135, 175, 215, 255]
        return "#%02x%02x%02x" % (levels[n // 36], levels[(n // 6) % 6], levels[n % 6])
    grey = 8 + 10 * (n - 232)
    return "#%02x%02x%02x" % (grey, grey, grey)


def _apply(style, codes):
    """``style`` (a dict) after the SGR ``codes``."""
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            style.clear()
        elif c == 1:
            style["bold"] = True
        elif c == 2:
            style["dim"] = True
        elif c == 3:
            style["italic"] = True
        elif c == 4:
            style["underline"] = True
        elif c == 22:
            style.pop("bold", None)
            style.pop("dim", None)
        elif c == 23:
            style.pop("italic", None)
        elif c == 24:
            style.pop("underline", None)
        elif 30 <= c <= 37 or 91 <= c <= 97:
            name = _NAMES[c % 10]
            if name is None:
                style.pop("color", None)
            else:
                style["color"] = name
        elif c == 90:
            style["color"] = "grey"
        elif c == 39:
            style.pop("color", None)
        elif c in (38, 48) and i + 1 < len(codes):
            key = "color" if c == 38 else "background"
            if codes[i + 1] == 5 and i + 2 < len(codes):
                style[key] = _colour256(codes[i + 2])
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                style[key] = "#%02x%02x%02x" % tuple(codes[i + 2 : i + 5])
                i += 4
        elif 40 <= c <= 47:
            style["background"] = _COLOURS[c - 40]
        elif c == 49:
            style.pop("background", None)
        i += 1
    return style


def _colour_name(style):
    """The palette's name of ``style``'s colour (dim text without a colour
    is ``dim``), or None."""
    colour = style.get("color")
    if colour in PALETTE:
        return colour
    if colour is None and style.get("dim"):
        return "dim"
    return None


def _css(style):
    parts = []
    name = _colour_name(style)
    if name is not None:
        parts.append(f"color: {PALETTE[name][0]}")
    elif "color" in style:
        parts.append(f"color: {style['color']}")
    if "background" in style:
        parts.append(f"background: {style['background']}")
    if style.get("bold"):
        parts.append("font-weight: bold")
    if style.get("italic"):
        parts.append("font-style: italic")
    if style.get("underline"):
        parts.append("text-decoration: underline")
    return "; ".join(parts)


def ansi_to_html(text):
    """``text`` with ANSI colour codes as HTML: escaped, each coloured run in
    a ``<span style=…>``, with the class ``gc-NAME`` of its palette colour
    (``PALETTE``) for the dark themes' style."""
    out, style, at = [], {}, 0
    for match in _ANSI.finditer(text):
        out.append(_span(text[at : match.start()], style))
        codes = [int(c) for c in match.group()[2:-1].split(";") if c] or [0]
        style = _apply(dict(style), codes)
        at = match.end()
    out.append(_span(text[at:], style))
    return "".join(out)


def _span(text, style):
    if not text:
        return ""
    css = _css(style)
    escaped = html.escape(text, quote=False)
    name = _colour_name(style)
    klass = f' class="gc-{name}"' if name is not None else ""
    return f'<span{klass} style="{css}">{escaped}</span>' if css else escaped


def _text(content):
    """The mimebundle of text as the terminal shows it."""
    return {
        "text/html": f'<style>{_DARK_CSS}</style><pre class="gradcalc">{ansi_to_html(content)}</pre>',
        "text/plain": _ANSI.sub("", content),
    }


def show_pieces(pieces, display, interrupt=None):
    """Shows each piece with ``display`` (IPython's, ``raw=True``); raises
    the first error's ``Error`` after showing what came before it. With
    ``interrupt`` (the exception of a Ctrl-C that stopped the run), the
    error's report is shown too and ``interrupt`` is raised instead."""
    for at, (kind, content) in enumerate(pieces):
        if kind == "text":
            display(_text(content), raw=True)
        elif kind == "svg":
            display({"image/svg+xml": content, "text/plain": "<gradcalc picture (SVG)>"}, raw=True)
        elif kind == "html":
            display({"text/html": iframe(content), "text/plain": "<gradcalc page (HTML)>"}, raw=True)
        elif kind == "markdown":
            display({"text/markdown": content, "text/plain": content}, raw=True)
        elif kind == "error":
            if interrupt is not None:
                display(_text(content), raw=True)
                break
            raise _error_in(pieces, at)
    if interrupt is not None:
        raise interrupt


def run_cell(source, origin="<cell>"):
    """Runs ``source`` in the notebook's session, read as a cell reads it
    (``_gradcalc.cell_source``: a command that writes a file it requires,
    given none, shows it here; ``:show`` is ``:html -``), and shows its
    pieces."""
    from IPython.display import display

    from ._homework import _note_input

    source = _gradcalc.cell_source(source)
    _note_input(source)
    pieces, interrupt = session()._rich(source, origin, True)
    show_pieces(pieces, display, interrupt)


def register(ipython):
    """Registers the ``%%gradcalc`` cell magic and ``%gradcalc`` line magic."""
    from IPython.core.magic import Magics, line_cell_magic, magics_class

    @magics_class
    class GradcalcMagics(Magics):
        @line_cell_magic
        def gradcalc(self, line, cell=None):
            """Runs gradcalc statements in the notebook's session: the line
            (``%gradcalc x = 2``) or the cell below ``%%gradcalc``."""
            run_cell(line if cell is None else cell)

    ipython.register_magics(GradcalcMagics)


__all__ = ["PALETTE", "Error", "ansi_to_html", "run_cell", "register", "show_pieces"]
