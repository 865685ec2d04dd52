"""Ctrl-C during ``Session.run()``: the ``KeyboardInterrupt`` carries the
events of the statements that ran before it, and of a descent's finished
steps, as ``events``; the session keeps them. No fixed waits: SIGINT is sent
once the run is seen holding the session (a call from another thread is
refused while it runs)."""

import _thread
import os
import signal
import threading
import time

import pytest

from gradcalc import Session

# L = c·w after the 2000 updates, c = 0.999^2000 + (1 − 0.999^2000)/0.001,
# and each descent step moves w by lr·c.
C = 0.999**2000 + (1 - 0.999**2000) / 0.001
SETUP = "p = 5; w = 0.5; L = w; :repeat 2000 L = L*0.999 + w"
LONG = "a = 1\nb = 2\n:descend L lr=1e-9 steps=1000000 w"


def interrupt_when_running(s, work=0.0, send=None):
    """A thread that sends SIGINT to this process (or calls ``send()``) once
    ``s`` is running (a call from another thread is refused) and this
    process has used ``work`` more seconds of CPU time since: evidence that
    the statement's long loop runs, however loaded the machine. Returns the
    thread and a dict that gets ``cpu``, the process's CPU time at the
    signal."""
    marks = {}

    def wait_then_interrupt():
        while True:
            try:
                s.names()
            except RuntimeError:  # the run holds the session: it has started
                break
            time.sleep(0.001)
        started = time.process_time()
        while time.process_time() - started < work:
            time.sleep(0.001)
        marks["cpu"] = time.process_time()
        if send is None:
            os.kill(os.getpid(), signal.SIGINT)
        else:
            send()

    thread = threading.Thread(target=wait_then_interrupt)
    thread.start()
    return thread, marks


def test_an_interrupted_run_keeps_the_events_before_the_interrupt():
    s = Session()
    s.run(SETUP, check=True)
    # The signal can land before the descent starts (a or b running): then
    # again, a few times at most.
    for _attempt in range(5):
        thread, _ = interrupt_when_running(s)
        with pytest.raises(KeyboardInterrupt) as caught:
            s.run(LONG)
        thread.join()
        events = caught.value.events
        if events and events[-1]["kind"] == "descent":
            break
    values = [(e["name"], e["value"]) for e in events if e["kind"] == "value"]
    assert values == [("a", 1), ("b", 2)]
    descent = events[-1]
    assert descent["kind"] == "descent" and descent["interrupted"] is True
    k = descent["steps"]
    assert 0 < k < 1_000_000
    # The finished steps are kept: w moved by k·lr·c, and L = c·w.
    w = s.value("w")
    assert w == pytest.approx(0.5 - k * 1e-9 * C, rel=1e-12)
    assert descent["rows"][-1]["values"] == [w]
    assert s.value("L") == pytest.approx(C * w, rel=1e-12)
    assert (s.value("a"), s.value("b")) == (1.0, 2.0)


@pytest.mark.parametrize(
    "send",
    [None, _thread.interrupt_main],
    ids=["SIGINT from another thread", "_thread.interrupt_main"],
)
def test_ctrl_c_stops_a_large_randn_within_a_second_of_cpu_time(send):
    # 36·10⁶ normal draws, seconds of CPU time whole; drawn in blocks of
    # 2²⁰ that look at Ctrl-C between two, and Python is asked about
    # signals every 0.1 s at most. The verdict is CPU time (the process's,
    # from the signal to the KeyboardInterrupt), so a loaded machine makes
    # the waits longer, never the verdict different.
    s = Session()
    thread, marks = interrupt_when_running(s, 0.1, send)
    with pytest.raises(KeyboardInterrupt):
        s.run("W = randn(6000, 6000)")
    used = time.process_time() - marks["cpu"]
    thread.join()
    assert used < 1.0, f"{used:.2f} s of CPU time after Ctrl-C"
    # Undone, and the session goes on: the first draw of a fresh session.
    assert "W" not in s.names()
    first = s.run("v = randn(3)", check=True)[0]["value"]
    assert first == Session().run("v = randn(3)", check=True)[0]["value"]
