"""An MCP tool call's result as a tool_result: the text the model reads, and whether it is an
error; pure, over the result as plain JSON (the SDK's model dumped by alias).

Structured content goes as compact JSON; otherwise the text blocks, joined; an image or audio
block is named, not sent; a resource is its text, or its address. `isError` makes an error
result. The text is capped at the size of any other tool result, saying how much was cut.
"""

from __future__ import annotations

import json
from typing import Any

from dayflow.tools import MAX_RESULT_CHARS, error_text

CUT_NOTE = "\n[cut: the result was {total:,} characters; the first {kept:,} are shown]"


def result_content(result: dict[str, Any]) -> tuple[str, bool]:
    """(content, is_error) for a CallToolResult given as JSON."""
    is_error = result.get("isError") is True
    structured = result.get("structuredContent")
    if structured is not None and not is_error:
        text = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
    else:
        text = "\n".join(_block_text(b) for b in result.get("content") or [])
    text = capped(text or "(no content)")
    return (error_text(text) if is_error else text), is_error


def _block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        size = len(str(block.get("data", ""))) * 3 // 4
        return f"[{kind} {block.get('mimeType', '')}, {size:,} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource {block.get('name', '')} {block.get('uri', '')}]"
    if kind == "resource":
        res = block.get("resource") or {}
        if isinstance(res, dict) and isinstance(res.get("text"), str):
            return res["text"]
        return f"[resource {res.get('uri', '') if isinstance(res, dict) else ''}, not text]"
    return f"[{str(kind)[:40]} content, not shown]"


def capped(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """`text` within `limit` characters, ending with a note of what was cut."""
    if len(text) <= limit:
        return text
    kept = limit - 100
    return text[:kept] + CUT_NOTE.format(total=len(text), kept=kept)
