"""Interrupting the kernel during a long gradcalc statement stops it, raises
KeyboardInterrupt, and keeps the session: a kernel driven by jupyter_client,
as a notebook drives it. No fixed waits: each step waits for the message
that says the kernel got there."""

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

from jupyter_client.manager import start_new_kernel  # noqa: E402

# A bound on each wait, so that a broken interrupt fails instead of hanging.
WAIT = 120


@pytest.fixture
def kernel(tmp_path):
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path))
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)


def reply(kc, msg_id):
    """The shell reply to `msg_id`."""
    while True:
        msg = kc.get_shell_msg(timeout=WAIT)
        if msg["parent_header"].get("msg_id") == msg_id:
            return msg["content"]


def outputs(kc, msg_id, until=None):
    """The iopub messages of `msg_id` up to its idle status, or up to the
    first one for which `until` is true."""
    seen = []
    while True:
        msg = kc.get_iopub_msg(timeout=WAIT)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        seen.append(msg)
        if until is not None and until(msg):
            return seen
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return seen


def execute(kc, code):
    """Runs `code`: its reply and its iopub messages."""
    msg_id = kc.execute(code)
    return reply(kc, msg_id), outputs(kc, msg_id)


def text_of(messages):
    return "".join(
        m["content"]["data"].get("text/plain", "")
        for m in messages
        if m["msg_type"] == "display_data"
    ) + "".join(m["content"]["text"] for m in messages if m["msg_type"] == "stream")


def test_interrupt_stops_the_statement_and_keeps_the_session(kernel):
    km, kc = kernel
    answer, _ = execute(kc, "%load_ext gradcalc")
    assert answer["status"] == "ok"
    answer, shown = execute(kc, "%%gradcalc\np = 5\nw = 0.5\nL = w\n:repeat 2000 L = L*0.999 + w")
    assert answer["status"] == "ok", answer
    assert text_of(shown).startswith("p = 5\nw = 0.5\nL = 0.5\n")

    # Seconds of descent (a million steps on a graph of 4000 nodes): the
    # cell says it starts, then runs it. The interrupt can land before the
    # statement starts (the cell is then stopped in Python, w unchanged) or,
    # on a fast machine, after it ended: then again, a few times at most.
    # L = c·w after the 2000 updates, c = 0.999^2000 + (1 - 0.999^2000)/0.001,
    # and each step moves w by 1e-9·c.
    c = 0.999**2000 + (1 - 0.999**2000) / 0.001
    w_start = 0.5
    long_cell = (
        "print('running', flush=True)\n"
        "get_ipython().run_cell_magic('gradcalc', '', ':descend L lr=1e-9 steps=1000000 w')\n"
    )
    for _attempt in range(5):
        msg_id = kc.execute(long_cell)
        started = outputs(
            kc,
            msg_id,
            until=lambda m: m["msg_type"] == "stream" and "running" in m["content"]["text"],
        )
        assert any(
            m["msg_type"] == "status" and m["content"]["execution_state"] == "busy"
            for m in started
        )
        km.interrupt_kernel()
        answer = reply(kc, msg_id)
        assert answer["status"] == "error"
        assert answer["ename"] == "KeyboardInterrupt"
        outputs(kc, msg_id)  # to its idle status

        # The next cell has every variable, and the descent's finished steps.
        answer, shown = execute(kc, "%%gradcalc\np")
        assert answer["status"] == "ok", answer
        assert text_of(shown) == "5\n"
        answer = kc.execute_interactive(
            "import gradcalc\ns = gradcalc.session()",
            user_expressions={"w": "s.value('w')", "L": "s.value('L')"},
            timeout=WAIT,
        )["content"]
        w = float(answer["user_expressions"]["w"]["data"]["text/plain"])
        L = float(answer["user_expressions"]["L"]["data"]["text/plain"])
        # The session is whole: every node recomputed at the last w.
        assert abs(L - c * w) <= 1e-9 * abs(L), (L, w)
        w_end = w_start - 1e6 * 1e-9 * c
        if w_end + 1e-9 < w < w_start:
            break  # stopped inside the descent, which stepped downhill
        w_start = w
    assert w_end + 1e-9 < w < w_start, (w_start, w)
