"""Ctrl-C during ``Session.run()``: the ``KeyboardInterrupt`` carries the
events of the statements that ran before it, and of a descent's finished
steps, as ``events``; the session keeps them. No fixed waits: SIGINT is sent
once the run is seen holding the session (a call from another thread is
refused while it runs)."""

import os
import signal
import threading

import pytest

from gradcalc import Session

# L = c·w after the 2000 updates, c = 0.999^2000 + (1 − 0.999^2000)/0.001,
# and each descent step moves w by lr·c.
C = 0.999**2000 + (1 - 0.999**2000) / 0.001
SETUP = "p = 5; w = 0.5; L = w; :repeat 2000 L = L*0.999 + w"
LONG = "a = 1\nb = 2\n:descend L lr=1e-9 steps=1000000 w"


def interrupt_when_running(s):
    """A thread that sends SIGINT to this process once ``s`` is running."""

    def wait_then_interrupt():
        while True:
            try:
                s.names()
            except RuntimeError:  # the run holds the session: it has started
                break
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=wait_then_interrupt)
    thread.start()
    return thread


def test_an_interrupted_run_keeps_the_events_before_the_interrupt():
    s = Session()
    s.run(SETUP, check=True)
    # The signal can land before the descent starts (a or b running): then
    # again, a few times at most.
    for _attempt in range(5):
        thread = interrupt_when_running(s)
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
