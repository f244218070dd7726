# SPDX-License-Identifier: Apache-2.0
"""Imported by vramz-torch.pth at interpreter start when VRAMZ_TORCH is set
(to 1, or to the interval in seconds).  torch is not imported yet then, so
the agent starts without importing it and waits for the script to; a
script that never imports torch gets an agent that publishes nothing."""
import os

from . import _start


def _interval():
    v = os.environ.get("VRAMZ_TORCH", "1")
    try:
        f = float(v)
    except ValueError:
        return 1.0
    return f if f > 0 else 1.0


try:
    _start(_interval(), os.environ.get("VRAMZ_TORCH_HISTORY", "") not in ("", "0"), None,
           os.environ.get("VRAMZ_TORCH_QUIET", "") not in ("", "0"))
except Exception as e:  # never break the interpreter's start
    import sys
    sys.stderr.write(f"vramz.torch: not attached: {e}\n")
