# SPDX-License-Identifier: Apache-2.0
"""vramz_build - a PEP 517 build backend for the vramz package, standard
library only.

Why not setuptools: pip builds in an isolated environment and would fetch
the backend named in pyproject.toml from the network; an in-tree backend
with no requirements builds offline, on any Debian, with or without
python3-setuptools.  It also places the package's .pth file (the
VRAMZ_TORCH=1 hook) at the root of site-packages, which setuptools can
only do through a custom command.

It builds a pure wheel (py3-none-any) of the vramz/ tree (its py.typed
marker too) plus vramz-torch.pth and the licence (dist-info/licenses/
LICENSE, PEP 639's place), and an sdist of this directory's sources with
the licence at its root.  The licence is the repository's LICENSE, one
level up; an sdist carries its own copy, found here first.
"""
import base64
import hashlib
import io
import os
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "vramz"
PTH = "vramz-torch.pth"


def _version():
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        for line in f:
            key, _, val = line.partition("=")
            if key.strip() == "version":
                return val.strip().strip('"')
    raise RuntimeError("pyproject.toml: no version")


def _license_path():
    """LICENSE beside this file (an unpacked sdist), else the
    repository's, one level up."""
    for p in (os.path.join(HERE, "LICENSE"), os.path.join(HERE, os.pardir, "LICENSE")):
        if os.path.exists(p):
            return p
    raise RuntimeError("no LICENSE beside vramz_build.py or one level up")


def _metadata():
    readme = ""
    path = os.path.join(HERE, "README.md")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\n"
        f"Version: {_version()}\n"
        "Summary: VRAM monitor for many-GPU Linux machines: Python reader and PyTorch agent\n"
        "License: Apache-2.0\n"
        "License-File: LICENSE\n"
        "Project-URL: Homepage, https://github.com/vramz/vramz\n"
        "Classifier: License :: OSI Approved :: Apache Software License\n"
        "Requires-Python: >=3.9\n"
        "Description-Content-Type: text/markdown\n\n" + readme)


def _package_files():
    """(path in the wheel, path on disk) of every module and the .pth."""
    out = []
    for root, dirs, files in os.walk(os.path.join(HERE, NAME)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py") or f == "py.typed":
                full = os.path.join(root, f)
                out.append((os.path.relpath(full, HERE).replace(os.sep, "/"), full))
    out.append((PTH, os.path.join(HERE, PTH)))
    return out


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return f"{arcname},sha256={digest.decode()},{len(data)}"


def _dist_info():
    return f"{NAME}-{_version()}.dist-info"


def _dist_info_files():
    wheel = ("Wheel-Version: 1.0\nGenerator: vramz_build\n"
             "Root-Is-Purelib: true\nTag: py3-none-any\n")
    return {"METADATA": _metadata(), "WHEEL": wheel, "top_level.txt": NAME + "\n"}


def _write_wheel(directory, editable_root=None):
    name = f"{NAME}-{_version()}-py3-none-any.whl"
    di = _dist_info()
    records = []
    with zipfile.ZipFile(os.path.join(directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        def add(arcname, data):
            zi = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            zi.external_attr = 0o644 << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
            records.append(_record_line(arcname, data))
        if editable_root:
            # PEP 660: a .pth that puts the source tree on sys.path
            add(f"__editable__.{NAME}.pth", (editable_root + "\n").encode())
            with open(os.path.join(HERE, PTH), "rb") as f:
                add(PTH, f.read())
        else:
            for arcname, full in _package_files():
                with open(full, "rb") as f:
                    add(arcname, f.read())
        for fname, text in _dist_info_files().items():
            add(f"{di}/{fname}", text.encode())
        with open(_license_path(), "rb") as f:
            add(f"{di}/licenses/LICENSE", f.read())
        records.append(f"{di}/RECORD,,")
        data = ("\n".join(records) + "\n").encode()
        zi = zipfile.ZipInfo(f"{di}/RECORD", date_time=(2020, 1, 1, 0, 0, 0))
        zi.external_attr = 0o644 << 16
        z.writestr(zi, data)
    return name


# ---- PEP 517 hooks ----------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    di = os.path.join(metadata_directory, _dist_info())
    os.makedirs(di, exist_ok=True)
    for fname, text in _dist_info_files().items():
        with open(os.path.join(di, fname), "w", encoding="utf-8") as f:
            f.write(text)
    return _dist_info()


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, editable_root=HERE)


def build_sdist(sdist_directory, config_settings=None):
    base = f"{NAME}-{_version()}"
    name = base + ".tar.gz"
    files = [("pyproject.toml", os.path.join(HERE, "pyproject.toml")),
             ("vramz_build.py", os.path.join(HERE, "vramz_build.py")),
             ("README.md", os.path.join(HERE, "README.md")),
             ("LICENSE", _license_path())] + _package_files()
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for arcname, full in files:
            if os.path.exists(full):
                t.add(full, arcname=f"{base}/{arcname}")
        pkginfo = _metadata().encode()
        ti = tarfile.TarInfo(f"{base}/PKG-INFO")
        ti.size = len(pkginfo)
        ti.mode = 0o644
        t.addfile(ti, io.BytesIO(pkginfo))
    return name
