"""Reading a live `vramz daemon`'s shared-memory segment with mmap (issue
14).  NOT IMPLEMENTED YET: the daemon and its documented layout
(docs/daemon.md) are being written; until they land this reader finds no
segment, and snapshot() goes on to libvramz.  tests/python test_snapshot
checks that it says so rather than reading anything."""

IMPLEMENTED = False
WHY = "reading a vramz daemon's segment is not implemented in this version"


def read(directory):
    """A dict shaped like `vramz status --json` from the live segment in
    directory, or None (and why) when there is none this reader can use."""
    return None, WHY
