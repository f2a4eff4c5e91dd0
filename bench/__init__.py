"""Dayflow's benchmarks (GitHub issue 6): `python -m bench` writes bench/RESULTS.md.

Method. The machines are shared and noisy, so no figure is compared with one taken at another
time: every comparison is a ratio measured inside one round. In a round the contenders run in
lockstep, one step at a time, spread evenly over the round (an N=40 run beside an N=1000 one
takes a step every 25 ticks) in a freshly shuffled order at each tick, each on a fresh SQLite
file (WAL, the same `synchronous` setting), so drifts of the machine fall on all of them alike.
Times are taken with `time.perf_counter_ns` around exactly the work being compared, per step; a
run's figure is the median of its steps, and the per-round ratios are summarised by their
median and IQR.

Modules, each one question:

- `workload`: the standard workload (seeded; used by nothing outside bench/).
- `persist`: per-step persistence cost and bytes on disk: the raw SQLite floor, Dayflow's store
  path and real loop, LangGraph's `SqliteSaver`, the Agents SDK's `SQLiteSession`.
- `resume`: the rebuild against its floor, and `dayflow resume` to its first model call.
- `compaction_tokens`: issue 4's figure, input tokens of the long run with compaction on and off.
- `cli_latency`: `--help`, `runs` and `tasks` on 10,000 runs against `import typer, rich`.
- `stats`, `report`, `reading`: summaries, RESULTS.md, and the reading against the targets;
  `environment`: the machine, disk, software and commit the figures were taken on.
"""
