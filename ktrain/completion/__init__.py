"""Shell completion that answers without importing typer, pydantic or the kubernetes client.

The shell runs `ktrain` on every TAB, so this package reads a command tree generated from the
command declarations at build time (`tree.json`, written by `python -m ktrain.cli.generate` and
kept in sync by a test) and asks small value providers for option values. It never imports
`ktrain.cli`: the CLI sits above it.
"""
