# SPDX-License-Identifier: Apache-2.0
"""torch.distributed's process groups in the stub, one process playing
every rank: what matters to the vramz agent is the memory NCCL adds
outside the allocator.  As NCCL 2.28 does (issue 37): a group's
communicator on a device costs COMM_BYTES there (cuda._stub.outside);
init_process_group makes the default group's at once only when a
device_id binds it, and then new_group makes each new group's at once
too; otherwise a group's communicator is made at its first collective,
on the tensor's device.  gloo adds nothing.  destroy_process_group frees
what it ends.  _calls counts the calls that reached here (a wrapper
must pass each through)."""
from .. import cuda as _cuda

COMM_BYTES = _cuda.COMM_BYTES


class ProcessGroup:
    def __init__(self, ranks, backend):
        self.ranks = list(ranks)
        self.backend = backend
        self.comms = set()  # devices with a communicator of this group


class group:  # torch.distributed.group.WORLD
    WORLD = None


_state = {"default": None, "bound": None, "groups": [], "calls": 0}


def is_available():
    return True


def is_initialized():
    return _state["default"] is not None


def _index(d):
    return d if isinstance(d, int) or d is None else getattr(d, "index", None)


def _comm(pg, dev):
    if "nccl" in pg.backend and dev not in pg.comms:
        pg.comms.add(dev)
        _cuda._stub.outside_add(dev, COMM_BYTES)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    _state["calls"] += 1
    if _state["default"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    backend = backend or ("nccl" if _cuda.is_available() else "gloo")
    pg = ProcessGroup(range(world_size if world_size > 0 else 1), backend)
    _state["default"] = group.WORLD = pg
    _state["groups"] = [pg]
    if device_id is not None and "nccl" in backend:
        _state["bound"] = _index(device_id)
        _comm(pg, _state["bound"])


def _pg(g):
    pg = g if g is not None else _state["default"]
    if pg is None:
        raise ValueError("Default process group has not been initialized, please make sure "
                         "to call init_process_group.")
    return pg


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    _state["calls"] += 1
    world = _pg(None)
    pg = ProcessGroup(world.ranks if ranks is None else ranks, backend or world.backend)
    _state["groups"].append(pg)
    if _state["bound"] is not None:
        _comm(pg, _state["bound"])
    return pg


def get_backend(group=None):
    return _pg(group).backend


def get_world_size(group=None):
    return len(_pg(group).ranks)


def get_rank(group=None):
    return 0


def get_process_group_ranks(group):
    return list(_pg(group).ranks)


def _collective(g, tensor):
    _state["calls"] += 1
    dev = _index(getattr(tensor, "device", None))
    _comm(_pg(g), _cuda._stub.current if dev is None else dev)


def all_reduce(tensor, op=None, group=None, async_op=False):
    _collective(group, tensor)


def broadcast(tensor, src, group=None, async_op=False):
    _collective(group, tensor)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _collective(group, tensor)


def barrier(group=None, async_op=False, device_ids=None):
    _collective(group, None)


def destroy_process_group(group=None):
    _state["calls"] += 1
    gone = list(_state["groups"]) if group is None else [group]
    for pg in gone:
        for dev in pg.comms:
            _cuda._stub.outside[dev] -= COMM_BYTES
        pg.comms = set()
        if pg in _state["groups"]:
            _state["groups"].remove(pg)
    if group is None or group is _state["default"]:
        _state["default"] = globals()["group"].WORLD = None
        _state["bound"] = None


def _reset():
    _state.update(default=None, bound=None, groups=[], calls=0)
    globals()["group"].WORLD = None
