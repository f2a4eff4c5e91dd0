"""Text safe to print on a terminal (`plain`): what every listing, sink and MCP line that shows
text from mail or a server escapes first. A value floor of its own, so the sinks, the MCP
client and `safe_text` need not import the listings (tests/floors.py).
"""

from __future__ import annotations

# Characters that reorder or hide text on a terminal (bidi overrides and isolates, zero-width
# marks) and control characters: text from mail shows them as visible escapes instead.
_UNSAFE = {
    cp: f"\\u{cp:04x}"
    for cp in (
        *range(0x09),
        *range(0x0B, 0x20),
        *range(0x7F, 0xA0),
        0x061C,
        0x200B,
        0x200E,
        0x200F,
        *range(0x202A, 0x202F),
        *range(0x2060, 0x2065),
        *range(0x2066, 0x206A),
        0xFEFF,
    )
}


def plain(text: str) -> str:
    """`text` safe to print on a terminal: bidi controls and control characters escaped."""
    return text.translate(_UNSAFE)
