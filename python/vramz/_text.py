# SPDX-License-Identifier: Apache-2.0
"""The one rule for text from outside that may reach a terminal, as
lib/text.c has it (tests/text-cases.txt is both's table): C0 controls,
DEL, the C1 controls U+0080-U+009F, the bidi controls U+061C, U+200E,
U+200F, U+202A-U+202E and U+2066-U+2069, and each byte that is not part
of valid UTF-8 become '?'; other text is kept."""

_BIDI = frozenset([0x61C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])


def unsafe(cp):
    """Whether code point cp must not reach a terminal as itself."""
    return cp < 0x20 or 0x7F <= cp <= 0x9F or cp in _BIDI


def sanitize(raw):
    """raw (bytes, or str) made safe: a str."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    # surrogateescape: one U+DC80-U+DCFF per byte that is not valid UTF-8
    # (overlong forms and encoded surrogates included), as the C rule
    text = raw.decode("utf-8", "surrogateescape")
    if text.isascii() and text.isprintable():
        return text
    return "".join("?" if unsafe(ord(c)) or 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)
