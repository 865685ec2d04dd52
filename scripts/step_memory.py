#!/usr/bin/env python3
"""The peak memory of the terminal's `:step` on a long number trace.

Builds a chain of STATEMENTS statements `x = 0.5`, `y = x`, then RULE
(`y = y*1.0001 + x` unless given) again and again, loads it into gradcalc on
a pseudo-terminal, then asks for `:trace` or `:step` (jumping to step
`--go`, by default the last but one) and reads the process's VmHWM (its peak
resident memory) from /proc/PID/status before leaving. Each command runs in a
fresh process, so each figure is that command's peak over the same loaded
session (the session's own figure, `--command none`, is printed too).

Usage: scripts/step_memory.py [--bin target/debug/gradcalc]
       [--statements 100000] [--rule "y = y*1.0001 + x"] [--go N]
Prints one line per command: its name, VmHWM in MB, and the seconds it took.
"""

import argparse
import os
import pty
import re
import select
import tempfile
import time


def read_until(fd, pattern, ceiling=600.0):
    if os.environ.get("STEP_MEMORY_DEBUG"):
        print("waiting for", pattern, flush=True)
    """Reads from `fd` until `pattern` (a regex) shows; returns the text read."""
    text = b""
    end = time.time() + ceiling
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        # Only the last 64 KiB are looked at: `:trace` writes megabytes.
        text = (text + chunk)[-65536:]
        if re.search(pattern, text.decode("utf-8", "replace")):
            if os.environ.get("STEP_MEMORY_DEBUG"):
                print(repr(text[-300:]), flush=True)
            return text.decode("utf-8", "replace")
    raise SystemExit(f"timed out waiting for {pattern!r}; read {text[-400:]!r}")


def peak(pid):
    """The process's VmHWM in MB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1000.0
    return float("nan")


def run(binary, script, command, go):
    """Loads `script` in a fresh gradcalc, runs `command`; (VmHWM MB, seconds)."""
    state = tempfile.mkdtemp()
    env = dict(os.environ, XDG_STATE_HOME=state, NO_COLOR="1", TERM="xterm", LC_ALL="C.UTF-8")
    env.pop("GRADCALC_HISTORY", None)
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(binary, [binary], env)
    read_until(fd, r"> ")
    os.write(fd, f":load {script}\r".encode())
    read_until(fd, r"y = [0-9.e+]+\r?\n.*> ")
    start = time.time()
    if command == "trace":
        os.write(fd, b":trace\r")
        read_until(fd, r"\[\d+\] x leaf[^\n]*\n(.|\n)*> ")
    elif command == "step":
        os.write(fd, b":step\r")
        total = int(re.search(r"step 1/(\d+)", read_until(fd, r"step 1/\d+")).group(1))
        target = go or total - 1
        os.write(fd, f"g {target}\r".encode())
        read_until(fd, rf"step {target}/{total}")
        os.write(fd, b"\x1b[D")
        read_until(fd, rf"step {target - 1}/{total}")
        os.write(fd, b"q")
        read_until(fd, r"stopped at step")
    seconds = time.time() - start
    memory = peak(pid)
    os.write(fd, b"\x04")
    os.waitpid(pid, 0)
    os.close(fd)
    return memory, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default="target/debug/gradcalc")
    parser.add_argument("--statements", type=int, default=100_000)
    parser.add_argument("--rule", default="y = y*1.0001 + x")
    parser.add_argument("--go", type=int, default=0)
    parser.add_argument("--command", choices=["none", "trace", "step"], action="append")
    args = parser.parse_args()
    binary = os.path.abspath(args.bin)
    with tempfile.TemporaryDirectory() as directory:
        script = os.path.join(directory, "chain.calc")
        with open(script, "w") as out:
            out.write("x = 0.5\ny = x\n")
            out.write((args.rule + "\n") * args.statements)
        for command in args.command or ["none", "trace", "step"]:
            memory, seconds = run(binary, script, command, args.go)
            print(f"{command:6} VmHWM {memory:7.1f} MB  {seconds:6.1f} s")


if __name__ == "__main__":
    main()
