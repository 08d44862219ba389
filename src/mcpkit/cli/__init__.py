"""The `mcpkit` command line: run a server, or discover/list/call one."""
