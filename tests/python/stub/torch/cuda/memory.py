# SPDX-License-Identifier: Apache-2.0
"""torch.cuda.memory of the stub: allocation history and the snapshot."""


def _record_memory_history(enabled="all", context="all", stacks="all", max_entries=None, **kw):
    from . import _stub
    _stub.history = None if enabled is None else dict(enabled=enabled, context=context, stacks=stacks,
                                                     max_entries=max_entries)


def _snapshot(device=None):
    """Segments of live blocks with their frames (one segment a block, as
    after many cudaMallocs: the agent must not depend on the layout)."""
    from . import _stub
    with _stub.lock:
        _stub.snapshot_calls += 1
        segs = []
        for h, (dev, size, frames) in sorted(_stub.live.items()):
            blk = {"size": size, "requested_size": size, "state": "active_allocated",
                   "address": h << 20}
            if frames is not None:
                blk["frames"] = frames
            segs.append({"device": dev, "address": h << 20, "total_size": size,
                         "segment_type": "large", "blocks": [blk]})
        return {"segments": segs, "device_traces": []}
