# SPDX-License-Identifier: Apache-2.0
"""python -m vramz.torch [-i SECONDS] [--history] (SCRIPT | -m MODULE) ARGS...

Runs a script (or module) with the vramz agent attached, as if started with
`python SCRIPT ARGS...`.  Child Python processes it starts (torchrun's
ranks, spawned workers) attach too, through VRAMZ_TORCH in their
environment, when the package is installed (its .pth hook)."""
import os
import runpy
import sys

USAGE = "usage: python -m vramz.torch [-i SECONDS] [--history] (SCRIPT | -m MODULE) [ARGS...]"


def main(argv):
    interval, history, module = 1.0, False, None
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        a = argv[i]
        if a in ("-h", "--help"):
            print(USAGE)
            return 0
        if a in ("-i", "--interval") and i + 1 < len(argv):
            try:
                interval = float(argv[i + 1])
            except ValueError:
                interval = -1
            if not interval > 0:
                sys.stderr.write(f"vramz.torch: bad interval '{argv[i + 1]}'\n")
                return 2
            i += 2
        elif a == "--history":
            history = True
            i += 1
        elif a == "-m" and i + 1 < len(argv):
            module = argv[i + 1]
            i += 2
            break
        elif a == "--":
            i += 1
            break
        else:
            sys.stderr.write(f"vramz.torch: unknown option '{a}'\n{USAGE}\n")
            return 2
    rest = argv[i:]
    if module is None and not rest:
        sys.stderr.write(USAGE + "\n")
        return 2
    os.environ["VRAMZ_TORCH"] = str(interval) if interval != 1.0 else "1"
    if history:
        os.environ["VRAMZ_TORCH_HISTORY"] = "1"
    from . import _start
    agent = _start(interval, history, None, False)
    try:
        if module is not None:
            sys.argv = [module] + rest
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            sys.argv = rest
            sys.path[0] = os.path.dirname(os.path.abspath(rest[0]))
            runpy.run_path(rest[0], run_name="__main__")
    except SystemExit as e:  # the script's exit status, however it was raised
        if agent is not None:
            agent.note_exit(e.code)
        raise
    return 0


if __name__ == "__main__":
    rc = main(sys.argv[1:])
    sys.exit(rc)  # looked up after main(): the agent's sys.exit notes the status
