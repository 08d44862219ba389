"""`python -m mcpkit.cli ...` runs the `mcpkit` command."""

from .main import main

main()
