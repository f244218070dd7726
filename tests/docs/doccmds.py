# SPDX-License-Identifier: Apache-2.0
"""doccmds.py - the docs say what happens: every vramz command shown in
README.md and docs/*.md is run against the fake NVML, or is listed in
tests/docs/not-run.txt with the reason it cannot run here; the error
messages the docs quote are the program's.

A command is a line of a code block (fenced, or indented four spaces)
that starts with `vramz ` or `$ vramz `.  Synopses (a `[` or an all-caps
placeholder such as LIST among the arguments) are not commands.  Each
document's commands run in order in a fresh directory of their own (so
`vramz log -o gpu.csv` makes the file a later `vramz replay gpu.csv`
reads), through bash (pipes work; `vramz` is the build's binary first in
PATH), with the 8-GPU fake machine, a private runtime and config
directory, and a timeout: a command that is still running then (serve,
watch, daemon, a log without --duration) has run, once what a later
command reads is there - a file it writes (`-o FILE`, `| tee FILE`) holds
a whole row under its header - and a command the docs show failing has
failed (both waited for, up to LONG_S: under load the first tick or the
error can come after the timeout).

After a `$ vramz ...` line, the lines up to the next `$ ` line or the
block's end are what the docs say it prints; those that start with
`vramz:` or `vramz COMMAND:` are error messages, and each must be a line
of the command's stderr, word for word.  A command shown without an
error must exit 0.

Error messages quoted elsewhere (a code line or an inline `code` span
starting with `vramz:`) must match a message the source can print: a
string literal of src/ or lib/ whose %-conversions match anything.

Usage: doccmds.py VRAMZ_BIN REPO_ROOT SCENARIO_DIR.  Prints one line per
command (ok / skip / FAIL) and exits 1 at any failure, or when not-run.txt
names a line no document has any more."""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

TIMEOUT_S = 3
LONG_S = 60
OUTPUT = re.compile(r"(?:^|\s)(?:-o|--output)\s+(\S+)|\|\s*tee\s+(\S+)")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_0-9]+(\.\.\.)?$|^\[[-a-zA-Z]")
ERROR_LINE = re.compile(r"^vramz( [a-z-]+)?: ")


def code_lines(path):
    """(line number, text, in_block_id) of each code line of a markdown
    file: inside ``` fences, or indented four spaces after a blank line
    (list items' blocks included)."""
    out = []
    fence = False
    block = 0
    prev_blank = True
    in_indent = False
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.lstrip().startswith("```"):
                fence = not fence
                block += 1
                continue
            if fence:
                out.append((n, line.strip(), block))
                continue
            if line.strip() == "":
                prev_blank = True
                continue
            indented = line.startswith("    ") or line.startswith("\t")
            if indented and (prev_blank or in_indent):
                if not in_indent:
                    block += 1
                in_indent = True
                out.append((n, line.strip(), block))
            else:
                in_indent = False
            prev_blank = False
    return out


def strip_comment(cmd):
    return re.sub(r"\s+#.*$", "", cmd).strip()


def commands(path):
    """[(line, command, expected error lines, prompted)] of a document."""
    lines = code_lines(path)
    found = []
    for i, (n, text, block) in enumerate(lines):
        prompted = text.startswith("$ vramz ") or text == "$ vramz"
        if not (prompted or text.startswith("vramz ")):
            continue
        cmd = strip_comment(text[2:] if prompted else text)
        args = cmd.split()[1:]
        if any(PLACEHOLDER.match(a) for a in args) or " ... " in cmd or cmd.endswith("..."):
            continue  # a synopsis
        errors = []
        if prompted:
            for n2, t2, b2 in lines[i + 1:]:
                if b2 != block or t2.startswith("$ "):
                    break
                if ERROR_LINE.match(t2):
                    errors.append(t2)
        found.append((n, cmd, errors, prompted))
    return found


def load_not_run(path):
    """[(doc, regex, reason)] from not-run.txt: `DOC REGEX -- REASON`."""
    rules = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            m = re.match(r"^(\S+)\s+(.*?)\s+--\s+(.+)$", line)
            if not m:
                sys.exit(f"not-run.txt: bad line (want DOC REGEX -- REASON): {line}")
            rules.append([m[1], re.compile(m[2]), m[3], 0])
    return rules


def has_row(path):
    """Whether a file a command writes holds its header and a whole row."""
    try:
        with open(path, "rb") as f:
            return f.read(1 << 20).count(b"\n") >= 2
    except OSError:
        return False


def run(cmd, cwd, env, fails):
    """(exit status or "running", stderr) of cmd through bash.  A command
    still running at the timeout has run once the files it writes hold a
    row (a later command reads them); one the docs show failing is given
    until LONG_S to fail; then its whole process group is killed (serve,
    a daemon, a pipe)."""
    outputs = [os.path.join(cwd, a or b) for a, b in OUTPUT.findall(cmd) if (a or b) != "-"]
    p = subprocess.Popen(["bash", "-c", "set -o pipefail; " + cmd], cwd=cwd, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, start_new_session=True)
    waited = 0.0
    while True:
        step = TIMEOUT_S if waited == 0 else 0.1
        try:
            _, err = p.communicate(timeout=step)
            rc = p.returncode
            break
        except subprocess.TimeoutExpired:
            waited += step
        if waited < LONG_S and (fails or not all(map(has_row, outputs))):
            continue
        rc = "running"
        os.killpg(p.pid, signal.SIGKILL)
        _, err = p.communicate()
        break
    try:  # what it left behind in its group (a daemon's children)
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return rc, err


class _Pat:
    """A literal's pattern and its text (conversions as `%`)."""
    def __init__(self, rx, literal):
        self.rx, self.literal = rx, literal

    def fullmatch(self, s):
        return self.rx.fullmatch(s)


# printf's conversions (and PRI macros), Python's f-string fields
CONV = re.compile(r'(?:%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t)?[diouxXeEfgGcsp]|\{[^{}]*\})+')
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def c_formats(root):
    """Patterns of the string literals the program prints from: src/ and
    lib/ (adjacent literals joined), the Python package (f-strings' fields
    as conversions), and the fake NVML's, which stand for NVML's own
    words.  Consecutive conversions are one, matching anything; a literal
    is kept when it says something of its own (three words at least)."""
    files = []
    for pat in ("src/**/*.c", "lib/**/*.c", "include/**/*.h", "tests/fake-nvml/*.c",
                "python/vramz/**/*.py"):
        files += glob.glob(os.path.join(root, pat), recursive=True)
    pats = []
    for f in files:
        src = open(f, encoding="utf-8", errors="replace").read()
        src = re.sub(r'"\s*(PRI[a-zA-Z0-9]+)\s*"', "d", src)  # "%" PRIu64 "x": one literal
        src = re.sub(r'"\s*\n\s*f?"', "", src)  # adjacent literals on following lines
        for m in LITERAL.finditer(src):
            s = m[1].replace('\\"', '"').replace("\\n", "").replace("\\t", " ").replace("\\\\", "\\")
            s = s.strip(" ,;:")
            if len(re.findall(r"[A-Za-z]{2,}", CONV.sub(" ", s))) < 3:
                continue
            parts = CONV.split(s)
            rx = "(.+?)".join(re.escape(p) for p in parts).replace("%%", "%")
            pats.append(_Pat(re.compile(rx), CONV.sub("%", s)))
    return pats


def quoted_errors(path):
    """Error messages a document quotes outside a command's output."""
    out = []
    text = open(path, encoding="utf-8").read()
    for m in re.finditer(r"`(vramz( [a-z-]+)?: [^`]+)`", text):
        out.append((text.count("\n", 0, m.start()) + 1, " ".join(m[1].split())))
    lines = code_lines(path)
    for i, (n, t, b) in enumerate(lines):
        if not ERROR_LINE.match(t):
            continue
        # not part of a prompted command's shown output
        j = i - 1
        while j >= 0 and lines[j][2] == b and not lines[j][1].startswith("$ "):
            j -= 1
        if j >= 0 and lines[j][2] == b and lines[j][1].startswith("$ vramz"):
            continue
        out.append((n, t))
    return out


# the words the docs write for a message's variable parts
PLACEHOLDER_WORD = re.compile(r"\b(?:FILE|DIR|N|PID|LINE|LIST|SIZE|PATH|CMD|KEY|VALUE)\b|\.\.\.")


LIBC = {os.strerror(e) for e in range(1, 134)}


SEP = re.compile(r": |; |, | \(|\)")


def text_known(b, pats, depth=0):
    """Whether text b is a message of the program: a literal's pattern
    matches it and what each of its conversions took is a value (no blank),
    libc's words (strerror) or, in turn, a message of the program; or it
    is such messages joined by ": ", "; " or in parentheses (a message
    built from the library's error and its detail)."""
    if len(b.split()) <= 2 or b in LIBC:  # a value ("pid 812", "1h00m", a path)
        return True
    if depth > 3:
        return False
    for p in pats:
        m = p.fullmatch(b)
        if m and all(text_known(g, pats, depth + 1) for g in m.groups()):
            return True
    cuts = [m.start() for m in SEP.finditer(b)]
    for c in cuts:  # the first piece known, the rest known in turn
        sep = SEP.match(b, c)
        head, tail = b[:c], b[sep.end():]
        if head and tail and text_known(head, pats, depth + 1) and text_known(tail, pats, depth):
            return True
    return False


def message_known(msg, pats):
    """Whether a quoted message is one the program prints (after `vramz: `
    and a command's name): text_known, the docs' placeholders (FILE, N,
    ...) standing for a value."""
    body = re.sub(r"\s+", " ", ERROR_LINE.sub("", msg)).strip()
    body = PLACEHOLDER_WORD.sub("X", body)
    return any(text_known(b, pats) for b in
               (body, "vramz: " + body, re.sub(r"^[a-z-]+: ", "", body)))


def main():
    vramz_bin, root, scenarios = (os.path.abspath(a) for a in sys.argv[1:4])
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    rules = load_not_run(os.path.join(root, "tests", "docs", "not-run.txt"))
    work = tempfile.mkdtemp(prefix="vramz-doccmds.")
    bindir = os.path.join(work, "bin")
    os.makedirs(bindir)
    os.symlink(os.path.abspath(vramz_bin), os.path.join(bindir, "vramz"))
    failed = ran = skipped = 0
    pats = c_formats(root)
    # the check itself can fail: a message of the program passes, the same
    # with one word changed does not
    good = "vramz: ignoring /run/vramz/segment: its daemon (pid 812) is gone; reading the driver"
    if not message_known(good, pats) or message_known(good.replace("reading the driver", "reading from the driver"), pats):
        sys.exit("doccmds.py: the message check no longer tells a message of the program from another")
    try:
        for doc in docs:
            name = os.path.relpath(doc, root)
            cwd = os.path.join(work, name.replace("/", "_"))
            os.makedirs(cwd)
            env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"],
                       FAKE_NVML_SCENARIO=os.path.join(scenarios, "8gpu.scn"),
                       VRAMZ_RUNTIME_DIR=os.path.join(cwd, ".run"),
                       XDG_CONFIG_HOME=os.path.join(cwd, ".cfg"), HOME=cwd, NO_COLOR="1")
            for n, cmd, errors, _ in commands(doc):
                rule = next((r for r in rules if r[0] == name and r[1].search(cmd)), None)
                if rule:
                    rule[3] += 1
                    skipped += 1
                    print(f"skip - {name}:{n}: {cmd}  ({rule[2]})")
                    continue
                ran += 1
                rc, err = run(cmd, cwd, env, bool(errors))
                errlines = [l.rstrip() for l in err.splitlines()]
                why = None
                if errors:
                    missing = [e for e in errors if e not in errlines]
                    if missing:
                        why = "the docs show %r; it printed %r" % (missing[0], err.strip()[:300])
                    elif rc in (0, "running"):
                        why = "the docs show an error, but it succeeded"
                elif rc not in (0, "running"):
                    why = "exit %s: %s" % (rc, err.strip()[:300])
                if why:
                    failed += 1
                    print(f"FAIL - {name}:{n}: {cmd}\n    {why}")
                else:
                    print(f"ok - {name}:{n}: {cmd}" + ("  (still running at the timeout)" if rc == "running" else ""))
            for n, msg in quoted_errors(doc):
                if message_known(msg, pats):
                    print(f"ok - {name}:{n}: quoted message is the program's: {msg}")
                else:
                    failed += 1
                    print(f"FAIL - {name}:{n}: no message of the program reads: {msg}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for doc, rx, reason, used in rules:
        if not used:
            failed += 1
            print(f"FAIL - not-run.txt: {doc} {rx.pattern}: no such command in the docs any more")
    print(f"{ran} run, {skipped} not run (with reasons), {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
