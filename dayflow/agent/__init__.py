"""The tool loop: one driver for both `brief` (a new run) and `resume` (an existing one).

The order of writes is the product. For each step:

1. call the model (no transaction open);
2. `steps.begin`: commit the response as a *pending* step and add its usage to the run, before
   any tool runs. From here on the response is paid for and never lost;
3. for each tool_use block: if a result is saved for its id, reuse it (`tool_reused`); else run
   the tool. A call with a local effect (`create_task`) commits its result together with the
   effect, in a transaction of its own; a read keeps its result in memory; a call that writes
   outside the store (`draft_reply`'s APPEND) commits a pending mark before its write and its
   outcome after it, each in a transaction of its own (dayflow.drafts.ledger);
4. `steps.complete`: commit the tool results (or, on the last turn, the brief and the run's end),
   fenced by the lease, in one transaction. (The response, the reads and the completion need
   no events of their own: the step row records them, and the run's log shows them from it.)

So a step is two transactions plus one per local effect. A kill anywhere leaves a state the
next process continues from: before 2, the one in-flight call is re-paid; after 2, resume
finishes the pending step without calling the model, reusing every saved effect (no task twice)
and running again the reads whose results were lost with the process (they had not been sent
to the model, so the conversation does not change); after 4, resume makes the next call.
Resume rebuilds the exact messages list from the rows, so the request it sends is the one the
uncrashed run would have sent.

The package's face is this module: `loop` holds what one drive is given and gives back,
`driver` the order of a run's calls, `step` what a committed response leads to (its tools,
its delivery, its end) and `prompt` the job the model is given.
"""

from __future__ import annotations

from dayflow.agent.driver import (
    drive,
    rebuild_messages,
    resume_run,
    start_run,
    totals_from_steps,
)
from dayflow.agent.loop import (
    BriefOptions,
    Hooks,
    Loop,
    Note,
    Reporter,
    RunResult,
    SourceFactory,
    json_sources,
    source_factory,
)
from dayflow.agent.prompt import SYSTEM_PROMPT, user_message

__all__ = [
    "SYSTEM_PROMPT",
    "BriefOptions",
    "Hooks",
    "Loop",
    "Note",
    "Reporter",
    "RunResult",
    "SourceFactory",
    "drive",
    "json_sources",
    "rebuild_messages",
    "resume_run",
    "source_factory",
    "start_run",
    "totals_from_steps",
    "user_message",
]
