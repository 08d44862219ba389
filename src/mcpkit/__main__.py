"""`python -m mcpkit ...` runs the `mcpkit` command."""

from .cli.main import main

main()
