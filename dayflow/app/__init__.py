"""The application: one `Runtime` per process (`runtime.py`: the environment, the `Config`,
the clock, the model, source and MCP factories, the profile), and the use cases the CLI, the
fleet's worker and the bench call with typed requests (`brief`, `resume`, `fork`,
`drive_job`). The CLI parses, builds a request, calls one function here and renders.

The face stays cheap to import (`--help`, `runs` and `tasks` import the runtime): the use
cases' modules are imported when one is asked for (PEP 562).
"""

from __future__ import annotations

from dayflow.app.runtime import Runtime, default_model_factory

__all__ = ["Runtime", "default_model_factory"]
