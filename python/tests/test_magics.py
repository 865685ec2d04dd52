"""%%gradcalc cells in IPython: what each output is shown as."""

import pytest

IPython = pytest.importorskip("IPython")

from IPython.testing.globalipapp import get_ipython  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

import gradcalc  # noqa: E402


@pytest.fixture(scope="module")
def ip():
    # The one IPython of this process: started here, or by another test file
    # (then `get_ipython` of globalipapp gives None, and IPython's own gives it).
    shell = get_ipython() or IPython.get_ipython()
    shell.run_line_magic("load_ext", "gradcalc")
    return shell


def cell(ip, source):
    """The rich outputs of a %%gradcalc cell: a list of mimebundles."""
    with capture_output() as captured:
        ip.run_cell_magic("gradcalc", "", source)
    return [output.data for output in captured.outputs]


def test_text_is_html_with_the_playgrounds_colours(ip):
    [out] = cell(ip, "x = 2\ny = x*x + x\n:grad x")
    assert out["text/plain"] == "x = 2\ny = 6\n∂y/∂x = 5\n"
    html = out["text/html"]
    assert html.startswith("<style>")
    assert '<pre class="gradcalc">' in html
    assert "\x1b" not in html
    # Values blue and gradients red-orange, as in the playground: the light
    # theme's colour inline, the dark theme's by class.
    assert '<span class="gc-green" style="color: #0b5cad">6</span>' in html
    assert '<span class="gc-red" style="color: #b3261e">5</span>' in html
    assert 'body[data-jp-theme-light="false"] .gradcalc .gc-green' in html
    assert "color: #7fd4ff !important" in html


def _luminance(colour):
    """WCAG 2.x relative luminance of ``#rrggbb``."""
    def channel(c):
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b)


def _contrast(a, b):
    """WCAG contrast ratio of two colours, 1 to 21."""
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_the_contrast_formula_gives_wcags_known_ratios():
    assert _contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert _contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    # The terminal's green on white, the ratio the notebook used to show.
    assert _contrast("#0dbc79", "#ffffff") == pytest.approx(2.47, abs=0.01)


def test_every_colour_a_cell_uses_has_4_5_to_1_on_light_and_dark_themes(ip):
    import re

    from gradcalc import _magics

    # A cell that prints every look gradcalc's text has: values, gradients,
    # names, a warning, dim text (a vector's shape).
    cell(ip, "x = 2\ny = x*x + x")
    outs = cell(ip, "z = 1/0\nv = [1, 2]\n:grad x\n:trace\n:vars")
    html = "".join(out["text/html"] for out in outs)
    light = set(re.findall(r'style="[^"]*color: (#[0-9a-f]{6})', html))
    dark = set(re.findall(r"color: (#[0-9a-f]{6}) !important", html))
    used = set(re.findall(r'class="gc-([a-z]+)"', html))
    assert {"green", "red", "yellow", "dim"} <= used, used
    assert light and dark
    for colour in light:
        assert _contrast(colour, "#ffffff") >= 4.5, colour
    # JupyterLab's dark theme (#111111 page, #212121 cells) and VS Code's.
    for background in ("#111111", "#212121", "#1e1e1e"):
        for colour in dark:
            assert _contrast(colour, background) >= 4.5, (colour, background)
    # And the whole palette, used or not.
    for name, (on_light, on_dark) in _magics.PALETTE.items():
        assert _contrast(on_light, "#ffffff") >= 4.5, name
        assert _contrast(on_dark, "#111111") >= 4.5, name
        assert _contrast(on_dark, "#212121") >= 4.5, name


def test_a_line_ending_in_a_semicolon_prints_nothing(ip):
    # docs/language.md §1: the line runs (the value is kept) but is silent;
    # `;` between statements still only separates them.
    assert cell(ip, "quiet = 6*7;") == []
    [out] = cell(ip, "quiet + 1\np = 1; q = 2")
    assert out["text/plain"] == "43\np = 1\nq = 2\n"
    assert gradcalc.session().value("quiet") == 42.0
    # A warning still shows.
    [out] = cell(ip, "w = 1/0;")
    assert "division by zero" in out["text/plain"]


def test_cells_share_one_session_with_the_api(ip):
    cell(ip, "a = 3")
    ip.run_line_magic("gradcalc", "b = a * 2")
    assert gradcalc.session().value("b") == 6.0
    [out] = cell(ip, "b")
    assert out["text/plain"] == "6\n"


def test_pictures_are_svg(ip):
    cell(ip, "x = 2\ny = x*x + x")
    [svg] = cell(ip, ":svg -")
    assert set(svg) == {"image/svg+xml", "text/plain"}
    assert svg["image/svg+xml"].startswith("<svg")
    [plot] = cell(ip, ":plot x")
    assert plot["image/svg+xml"].startswith("<svg")


def test_the_page_is_a_sandboxed_iframe(ip):
    cell(ip, "x = 0.5\ny = tanh(x)")
    [page] = cell(ip, ":html -")
    assert page["text/html"].startswith('<div class="gradcalc-frame"')
    assert '<iframe sandbox="allow-scripts"' in page["text/html"]
    assert "srcdoc=\"&lt;!DOCTYPE html&gt;" in page["text/html"]


def test_trace_md_is_markdown(ip):
    cell(ip, "x = 2\ny = x*x")
    [table] = cell(ip, ":trace md")
    assert table["text/markdown"].startswith("| Step | Node | Upstream | Local derivative |")


def test_an_error_fails_the_cell_with_its_caret(ip):
    with capture_output():
        before = cell(ip, "p = 1")
    assert before[0]["text/plain"] == "p = 1\n"
    with pytest.raises(gradcalc.Error) as caught:
        cell(ip, "q = 2\nr = q + nope\ns = 3")
    e = caught.value
    assert (e.message, e.line, e.column) == ("unknown name `nope`", 2, 9)
    assert e.help == "assign it first, e.g. `nope = 1`"
    lines = e._render_traceback_()
    assert any("r = q + nope" in line for line in lines)
    assert any("^" in line for line in lines)
    assert gradcalc.session().value("q") == 2.0
    with pytest.raises(KeyError):
        gradcalc.session().value("s")  # nothing after the error ran
    result = ip.run_cell("%%gradcalc\nt = \n")
    assert isinstance(result.error_in_exec, gradcalc.Error)
    assert not result.success


def test_an_error_in_a_cell_carries_its_code_from_the_json_event(ip):
    cell(ip, "x = 2\ny = x*x")
    with pytest.raises(gradcalc.Error) as caught:
        cell(ip, "y; :grad nope")
    e = caught.value
    # The same error as `gradcalc --json` reports for this source.
    [expected] = [ev for ev in gradcalc.Session().run("x = 2\ny = x*x\ny; :grad nope")
                  if ev["kind"] == "error"]
    assert (e.code, e.message, e.help) == (expected["code"], expected["message"], expected.get("help"))
    assert (e.line, e.column) == (1, 10)  # `nope`, after the 9 characters of "y; :grad "
    assert e.code == "unknown-name"
    with pytest.raises(gradcalc.Error) as caught:
        cell(ip, "z = (1")
    assert caught.value.code == "parse"


def test_pictures_and_pages_without_a_file_show_in_the_cell(ip):
    cell(ip, "x = 0.5\ny = tanh(x)")
    [svg] = cell(ip, ":svg")
    assert svg["image/svg+xml"].startswith("<svg")
    [step] = cell(ip, ":svg --step 1  # the first backward step")
    assert step["image/svg+xml"].startswith("<svg")
    for command in (":html", ":show"):
        [page] = cell(ip, command)
        assert page["text/html"].startswith('<div class="gradcalc-frame"')
        assert '<iframe sandbox="allow-scripts"' in page["text/html"]


def test_only_commands_that_require_a_file_get_the_dash():
    # Read from the command table: `:svg`, `:html` and `:save` write a file
    # they require; `:dot` and `:trace md` print without one.
    from gradcalc._gradcalc import cell_source

    assert cell_source(":svg") == ":svg -"
    assert cell_source(":svg --step 2") == ":svg --step 2 -"
    assert cell_source(":svg g.svg --step 2") == ":svg g.svg --step 2"
    assert cell_source(":svg -f g.svg") == ":svg -f g.svg"
    assert cell_source(":svg -") == ":svg -"
    assert cell_source(":html # the page") == ":html - # the page"
    assert cell_source(":show") == ":html -"
    assert cell_source("x = 1; :svg") == "x = 1; :svg -"
    assert cell_source(":save") == ":save -"
    assert cell_source(":dot") == ":dot"
    assert cell_source(":trace md") == ":trace md"
    assert cell_source(":load") == ":load"  # reads a file: nothing to show
    assert cell_source("svg = 2\nsvg") == "svg = 2\nsvg"
