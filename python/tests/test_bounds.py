"""The Python bridge under attack (issue 39): a session used from another
thread, a graph holding nan or an infinity drawn, traced and shown."""

import math
import threading

import gradcalc
from gradcalc import Session, Value


def in_thread(work):
    """Runs ``work()`` on another thread: what it returned or raised."""
    out = {}

    def run():
        try:
            out["value"] = work()
        except BaseException as error:  # noqa: BLE001 - the test inspects it
            out["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return out


def test_a_session_works_from_another_thread_one_call_at_a_time():
    session = Session()
    session.run("x = 3; y = x^2")
    out = in_thread(lambda: (session.run("z = y + x"), session.value("z"), session.grad("z", "x")))
    assert "error" not in out, repr(out.get("error"))
    _, z, dz = out["value"]
    # z = x² + x at 3 is 12; ∂z/∂x = 2x + 1 = 7.
    assert z == 12.0
    assert dz == 7.0
    # And back on this thread, the same session.
    assert session.value("z") == 12.0


def test_a_session_made_and_dropped_in_another_thread():
    def work():
        session = Session()
        session.run("a = 2; b = a*a")
        value = session.value("b")
        del session
        return value

    out = in_thread(work)
    assert out == {"value": 4.0}
    # Made here, dropped there.
    session = Session()
    session.run("q = 5")
    holder = [session]
    del session
    out = in_thread(lambda: holder.pop() and None)
    assert out == {"value": None}


def test_a_graph_holding_nan_and_inf_is_drawn_traced_and_shown():
    x = Value(float("nan"), label="x")
    w = Value(2.0, label="w")
    y = x * w + float("inf") + Value(-float("inf")) * 0
    y.backward()
    # nan propagates (nan·2 + inf + (-inf)·0): the value, and ∂y/∂w = x = nan.
    assert math.isnan(y.data)
    assert math.isnan(w.grad)
    assert w.grad != w.grad
    picture = gradcalc.draw(y)
    assert "<svg" in picture.svg
    text = gradcalc.trace(y)
    assert "unknown name" not in text
    assert "nan" in text
    page = gradcalc.show(y)
    assert "<html" in page.html.lower()
