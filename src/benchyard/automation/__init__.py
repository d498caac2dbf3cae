"""Automation: what runs without a person at a terminal, and what an assistant may only propose.

- `proposals`: benchmark changes drafted by an assistant (the MCP server's `benchmark_create` and
  `benchmark_update`), validated by the loader, written to disk only when a person accepts them.
- `schedules`: cron schedules of runs, fired by `benchyard worker` (once, whatever the number of
  workers), each run compared with the schedule's previous one.
- `webhooks`: signed JSON events (run finished, regression, gate decision) delivered with retries,
  every try and its response recorded.
- `assistant`: what the MCP server's tools call (benchmarks, scenarios, runs, reports, compare,
  enqueue).

The MCP server (`benchyard.mcp_server`), the CLI and the web UI only parse and call these modules.
"""
