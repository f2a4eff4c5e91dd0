"""Dayflow's floors: which way imports run, one row per module or package (`tests/test_floors.py`
holds the code to it, and ARCHITECTURE.md's floor paragraph is written from it).

How to read it: FLOORS lists the floors from the ground up; each floor names its rows, a row
being a module (`models`) or a package (`store`: every module under `dayflow/store/`) or a
module inside a package that stands on a floor of its own (`sources.factory`: the longest
row that names a module is its row). A module may import its own floor and any floor below
it, never one above, and rows never import each other in a circle (nor do modules). Every
import counts: at the top of a module, inside a function (a lazy import keeps start-up fast,
it does not change who depends on whom), under `if TYPE_CHECKING:` and through
`importlib.import_module("dayflow....")`.

A new module: add it to the row of its concept, or give it a row on the lowest floor whose
rows hold everything it imports. ALLOWED names an import up a floor that stays for now, and
why; each one is a debt, not a rule.
"""

from __future__ import annotations

# (floor name, its rows), from the ground up; on a floor, a row is listed after the rows it
# imports.
FLOORS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "values",
        (
            "__init__",
            "errors",
            "frozen",
            "models",
            "clock",
            "files",
            "printable",
            "senders",
            "no_task",
            "network",
            "shown",
            "safe_text",
            "dates",
            "page",
            "schedule_units",
            "schedule_parse",
            "schedule_system",
        ),
    ),
    (
        "settings files and the store",
        ("config_files", "trust", "pricing", "store", "taskfiles", "rules"),
    ),
    (
        "sources, tools, providers",
        (
            "providers",
            "compaction",
            "turns",
            "sources",
            "followups",
            "sources.inbox",
            "drafts",
            "meetings",
            "mcp.config",
            "sources.config",
            "delivery",
            "config",
            "tools",
            "mcp",
            "providers.offline",
            "sources.factory",
        ),
    ),
    ("the loop", ("agent", "probe")),
    (
        "what happens on a day",
        ("briefing", "batching", "fleet", "history", "why", "schedule_render", "schedule"),
    ),
    ("what is shown", ("timeline", "listing", "render", "view")),
    ("the application", ("app",)),
    (
        "the CLI",
        (
            "cli_console",
            "cli_base",
            "cli_brief",
            "cli_listings",
            "cli_history",
            "cli_migrate",
            "cli_rules",
            "cli_tasks",
            "cli_schedule",
            "cli_sources",
            "cli_profiles",
            "cli_fleet",
            "cli_mcp",
            "cli_manual",
            "cli_why",
            "cli_view",
            "cli",
            "__main__",
        ),
    ),
)

# (importing module, imported module): why it stays for now.
ALLOWED: dict[tuple[str, str], str] = {}
