"""The CLI's consoles, made lazily: `dayflow runs` and `tasks` print plain text through them
without importing rich.console (it costs more than the rest of `runs`: issue 13)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from rich.console import Console


class _LazyConsole:
    """A Rich `Console` made on first real use. Until then it answers what plain-text output
    needs (`file`, `is_terminal`, `width`, `color_system`) without importing rich.console,
    which costs more than the rest of `dayflow runs`."""

    def __init__(self, env: Mapping[str, str], *, stderr: bool = False, **kw: Any) -> None:
        self._env = env  # the runtime's: COLUMNS and NO_COLOR before Rich reads them
        self._kw = {"stderr": stderr, **kw}
        self._stderr = stderr
        self._console: Console | None = None

    def _real(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._kw)
        return self._console

    @property
    def file(self) -> Any:
        if self._console is not None:
            return self._console.file
        return sys.stderr if self._stderr else sys.stdout

    @property
    def is_terminal(self) -> bool:
        if self._console is not None:
            return self._console.is_terminal
        isatty = getattr(self.file, "isatty", None)
        return bool(isatty and isatty())

    @property
    def width(self) -> int:
        if self._console is not None:
            return self._console.width
        import shutil

        columns = self._env.get("COLUMNS", "")
        return int(columns) if columns.isdigit() else shutil.get_terminal_size().columns

    @property
    def color_system(self) -> str | None:
        if self._console is not None:
            return self._console.color_system
        return None if self._env.get("NO_COLOR") or not self.is_terminal else "standard"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real(), name)


def lazy_console(env: Mapping[str, str], **kw: Any) -> Console:
    """A Console for `Runtime.out` / `Runtime.err` that imports Rich only when it must print
    (`env`: the runtime's environment, for what is answered before Rich is imported)."""
    return cast("Console", _LazyConsole(env, **kw))
