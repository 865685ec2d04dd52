#!/usr/bin/env python3
"""How long the REPL takes to answer Ctrl-C during a long statement.

Starts `gradcalc` on a pseudo-terminal (pexpect), sets up
`x = 0.5; y = tanh(x)*sin(x)`, types each long statement below, presses
Ctrl-C 0.3 s later, and prints the time from the key to the "interrupted"
line (or to whatever ended the statement), then checks the session goes on.

    python3 scripts/ctrl_c_latency.py [path/to/gradcalc]
"""
import sys
import time

import pexpect

BINARY = sys.argv[1] if len(sys.argv) > 1 else "target/debug/gradcalc"
NESTED = "y"
for _ in range(14):
    NESTED = f"grad({NESTED}, x)"
STATEMENTS = [f"g = {NESTED}", "g = y", ":repeat 30 g = grad(g, x)"]


def main():
    repl = pexpect.spawn(BINARY, env={"NO_COLOR": "1", "TERM": "xterm", "LC_ALL": "C.UTF-8",
                                      "GRADCALC_HISTORY": "/dev/null"},
                         encoding="utf-8", timeout=120)
    repl.expect("> ")
    repl.sendline("x = 0.5; y = tanh(x)*sin(x)")
    repl.expect("y = ")
    for statement in STATEMENTS:
        repl.expect("> ")
        repl.sendline(statement)
        if statement == "g = y":
            continue
        time.sleep(0.3)
        pressed = time.monotonic()
        repl.sendcontrol("c")
        index = repl.expect(["interrupted", "builds more than"])
        answered = time.monotonic() - pressed
        how = ["interrupted", "refused by the node budget"][index]
        print(f"{statement[:40]:<42} {how} {answered * 1000:8.1f} ms after Ctrl-C")
    repl.expect("> ")
    repl.sendline("x + 1")
    repl.expect("1.5")
    print("session goes on: x + 1 = 1.5")
    repl.sendline(":quit")
    repl.expect(pexpect.EOF)


if __name__ == "__main__":
    main()
