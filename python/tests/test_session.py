"""gradcalc.Session: statements run as `gradcalc --json` runs them, values
and gradients, errors, files, and the pictures of a Value's graph."""

import os

import pytest

import gradcalc
from gradcalc import Session, Value


def test_run_returns_the_json_events():
    s = Session()
    events = s.run("x = 2; y = 3; z = x*y + x; :grad x")
    assert events == [
        {"kind": "value", "name": "x", "value": 2,
         "from": {"statement": 1, "source": "<input>", "line": 1, "column": 1}},
        {"kind": "value", "name": "y", "value": 3,
         "from": {"statement": 2, "source": "<input>", "line": 1, "column": 8}},
        {"kind": "value", "name": "z", "value": 8,
         "from": {"statement": 3, "source": "<input>", "line": 1, "column": 15}},
        {"kind": "grad", "of": "z", "wrt": "x", "value": 4,
         "from": {"statement": 4, "source": "<input>", "line": 1, "column": 28}},
    ]


def test_the_session_lasts_from_run_to_run():
    s = Session()
    s.run("w = 0\nL = (w - 3)^2")
    s.run("w := 1")
    assert s.value("L") == 4.0
    assert s.grad("L", "w") == -4.0
    assert sorted(s.names()) == ["L", "w"]
    [descent] = s.run(":descend L lr=0.25 steps=1 w")
    assert descent["kind"] == "descent" and descent["losses"] == [4, 1]
    assert s.value("w") == 2.0


def test_an_error_is_an_event_and_raises_with_check():
    s = Session()
    s.run("x = 2")
    [error] = s.run("y = x + w\nz = 1")  # stops at the error, as a script
    assert error["kind"] == "error"
    assert (error["code"], error["line"], error["column"]) == ("unknown-name", 1, 9)
    with pytest.raises(KeyError):
        s.value("z")
    with pytest.raises(gradcalc.Error) as caught:
        s.run("x = 3\ny = x +* 2", check=True)
    e = caught.value
    assert (e.code, e.line, e.column) == ("parse", 2, 8)
    assert s.value("x") == 3.0  # the statements before the error ran


def test_value_and_grad_of_unknown_names():
    s = Session()
    s.run("x = 2; y = x^3")
    assert s.grad("y", "x") == 12.0
    with pytest.raises(KeyError):
        s.value("nope")
    with pytest.raises(KeyError):
        s.grad("y", "nope")


def test_files_follow_the_rules_of_scripts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = Session()
    s.run("x = 2; y = x*x")
    [wrote] = s.run(":svg y.svg", check=True)
    assert wrote["kind"] == "wrote" and wrote["path"] == "y.svg"
    assert (tmp_path / "y.svg").read_text().startswith("<svg")
    [error] = s.run(":svg y.svg")
    assert error["code"] == "write" and "-f" in error["help"]
    assert s.run(":svg -f y.svg")[0]["kind"] == "wrote"
    outside = os.path.join(os.path.dirname(tmp_path), "gradcalc-outside.svg")
    [error] = s.run(f":svg {outside}")
    assert error["code"] == "write" and "only in" in error["message"]
    allowed = Session(allow_writes=[tmp_path.parent])
    allowed.run("x = 1; y = x + 1")
    assert allowed.run(f":svg {outside}")[0]["kind"] == "wrote"
    os.remove(outside)


def test_a_session_renders_its_page():
    s = Session()
    assert s._repr_html_() == "<pre>gradcalc session: nothing to differentiate yet</pre>"
    s.run("x = 0.5; y = tanh(x)")
    page = s._repr_html_()
    assert page.startswith('<div class="gradcalc-frame"')
    assert '<iframe sandbox="allow-scripts"' in page
    assert "gradcalc: y" in page  # the page's title, escaped in srcdoc


def neuron():
    x1, x2 = Value(2.0, label="x1"), Value(0.0, label="x2")
    w1, w2 = Value(-3.0, label="w1"), Value(1.0, label="w2")
    b = Value(6.8813735870195432, label="b")
    n = x1 * w1 + x2 * w2 + b
    o = n.tanh()
    o.label = "o"
    return o, (x1, x2, w1, w2, b)


def test_trace_of_a_value_is_gradcalcs_trace():
    o, (x1, x2, w1, w2, b) = neuron()
    o.backward()
    text = gradcalc.trace(o)
    assert text.startswith("backward pass from o: ")
    assert "[1] o = tanh(" in text
    # The gradients the trace ends with are the Value's.
    assert f"∂o/∂w1 = {w1.grad:.10g}" in text
    assert f"∂o/∂x1 = {x1.grad:.10g}" in text


def test_fan_out_is_written_once():
    a = Value(3.0, label="a")
    y = a * a + a
    text = gradcalc.trace(y)
    assert "(3rd of 3 uses: accumulated)" in text
    y.backward()
    assert a.grad == 7.0


def test_draw_and_show_a_value():
    o, _ = neuron()
    picture = gradcalc.draw(o)
    assert picture._repr_svg_().startswith("<svg")
    assert "<title>o</title>" in picture.svg
    page = gradcalc.show(o)
    assert page.html.startswith("<!DOCTYPE html>")
    assert page._repr_html_().startswith('<div class="gradcalc-frame"')
    assert '<iframe sandbox="allow-scripts"' in page._repr_html_()
    with pytest.raises(TypeError):
        gradcalc.draw(2.0)


def test_deep_values_are_written_in_pieces():
    x = Value(1.0, label="x")
    y = x
    for _ in range(500):
        y = y * 1.0 + 0.0
    y.backward()
    text = gradcalc.trace(y)
    assert text.startswith("backward pass from out: ")
    assert text.rstrip().endswith(f"∂out/∂x = {x.grad:.10g}")


def test_the_page_frame_is_sized_to_its_graph():
    # The 2-16-16-1 moons MLP (examples/moons_mlp.calc): its page is laid
    # out for a notebook's width and its frame is as high as the picture
    # drawn across the output's width, plus the page's bar and line (the
    # library's frame; tests/it/notebook_frame.rs measures it in Chromium).
    import pathlib
    import re

    example = pathlib.Path(__file__).resolve().parents[2] / "examples" / "moons_mlp.calc"
    s = Session()
    s.run(example.read_text(encoding="utf-8") + "\nL", check=True)
    page = s.show()
    html = page._repr_html_()
    assert html == gradcalc.iframe(page.html)
    width, height = map(float, re.search(r'data-picture="([0-9.]+) ([0-9.]+)"', page.html).groups())
    # Narrower than a 1920-px slide: fitted to 960 px across, taller than wide.
    assert width < 1920 and height > width
    assert f"calc(min((100cqw - 2px) * {height / width:.6f}, {height:.0f}px) + 180px)" in html
    assert "height: 560px" not in html
    # A height given by hand is kept.
    assert "height: 400px" in gradcalc.iframe(page.html, 400)


def test_an_error_shows_its_fix_and_a_set_no_place_nobody_typed():
    # A script's traceback shows str(error) only: the help was left out,
    # and `set` named column 6 of `x := 5`, a text the user never typed.
    s = Session()
    s.run("x = [1, 2]")
    with pytest.raises(gradcalc.Error) as caught:
        s.set("x", 5)
    e = caught.value
    assert (e.code, e.line, e.column) == ("shape", None, None)
    assert str(e) == (
        "[shape] a leaf of shape (2) cannot take a value of shape ()\n"
        "help: give it a value of shape (2), or bind the name again with `=` "
        "(`NAME = …` takes any shape)"
    )
    assert s.value("x").tolist() == [1.0, 2.0]
    with pytest.raises(gradcalc.Error) as caught:
        s.run("y = x + qq", check=True)
    assert str(caught.value) == (
        "[unknown-name] unknown name `qq` (line 1, column 9)\n"
        "help: assign it first, e.g. `qq = 1`"
    )
