#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""reuse-check.py - every file of vramz says its licence: an SPDX line in
its first five lines (sources and scripts, tools/spdx.sh), or a path of
REUSE.toml's annotations (data, images, documents).  Also: each
annotation's path matches a file (a stale path is a claim about nothing),
and the licence REUSE looks for, LICENSES/Apache-2.0.txt, is the
project's LICENSE.  ctest runs it as lint.reuse; the REUSE tool is not
needed (it is not packaged where CI runs), so the globs are read as the
REUSE specification defines them: `*` within a directory, `**` across.

Files are git's when this is a checkout (untracked build output is no
part of the project), else every file but build*/ (a tarball)."""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = "SPDX-License-Identifier:"


def files():
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, check=True)
        names = [n for n in out.stdout.decode().split("\0") if n]
        if names:
            return names
    except (OSError, subprocess.CalledProcessError):
        pass
    names = []
    for d, dirs, fs in os.walk(ROOT):
        rel = os.path.relpath(d, ROOT)
        dirs[:] = [x for x in dirs if not (rel == "." and (x.startswith("build") or x == ".git"))
                   and x != "__pycache__"]
        names += [os.path.normpath(os.path.join(rel, f)) for f in fs]
    return names


def annotations(path):
    """[(path globs, licence)] of REUSE.toml."""
    text = open(path, encoding="utf-8").read()
    try:
        import tomllib
        doc = tomllib.loads(text)
        out = []
        for a in doc.get("annotations", []):
            p = a["path"]
            out.append(([p] if isinstance(p, str) else list(p), a.get("SPDX-License-Identifier")))
        return out
    except ImportError:  # Python before 3.11: the subset REUSE.toml uses here
        out = []
        for block in text.split("[[annotations]]")[1:]:
            m = re.search(r"path\s*=\s*\[(.*?)\]", block, re.S)
            lic = re.search(r'SPDX-License-Identifier\s*=\s*"([^"]*)"', block)
            out.append((re.findall(r'"([^"]*)"', m.group(1)) if m else [], lic and lic.group(1)))
        return out


def glob_rx(g):
    """REUSE's glob: ** any characters, * any but /, \\* a star."""
    rx, i = "", 0
    while i < len(g):
        if g.startswith("**", i):
            rx, i = rx + ".*", i + 2
        elif g[i] == "*":
            rx, i = rx + "[^/]*", i + 1
        elif g.startswith("\\*", i):
            rx, i = rx + re.escape("*"), i + 2
        else:
            rx, i = rx + re.escape(g[i]), i + 1
    return re.compile(rx + r"\Z")


def has_tag(path):
    try:
        with open(path, "rb") as f:
            head = b"".join(f.readline() for _ in range(5))
    except OSError:
        return False
    return TAG.encode() in head


def main():
    bad = 0
    anns = annotations(os.path.join(ROOT, "REUSE.toml"))
    globs = [(g, glob_rx(g), lic) for paths, lic in anns for g in paths]
    used = set()
    for g, _, lic in globs:
        if lic != "Apache-2.0":
            print(f"REUSE.toml: {g}: licence {lic!r}, not the project's Apache-2.0")
            bad = 1
    for name in sorted(files()):
        full = os.path.join(ROOT, name)
        if os.path.islink(full) or not os.path.isfile(full):
            continue
        # REUSE leaves the licence texts themselves out
        if re.match(r"(LICENSE|COPYING)(\.|$)", os.path.basename(name)) or name.startswith("LICENSES/"):
            continue
        hits = [g for g, rx, _ in globs if rx.match(name)]
        used.update(hits)
        if not hits and not has_tag(full):
            print(f"{name}: no '{TAG} Apache-2.0' in its first five lines and no REUSE.toml path")
            bad = 1
    for g, _, _ in globs:
        if g not in used:
            print(f"REUSE.toml: the path {g} matches no file")
            bad = 1
    lic = os.path.join(ROOT, "LICENSES", "Apache-2.0.txt")
    if not os.path.exists(lic) or open(lic, "rb").read() != open(os.path.join(ROOT, "LICENSE"), "rb").read():
        print("LICENSES/Apache-2.0.txt: missing or not the text of LICENSE")
        bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())
