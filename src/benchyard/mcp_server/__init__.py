"""`benchyard mcp`: benchyard's tools for an assistant over the Model Context Protocol (the
official `mcp` SDK), on stdio or streamable HTTP. The tools only parse and call
`benchyard.automation.assistant`, which holds the rules (docs/automation.md#mcp-tools)."""
