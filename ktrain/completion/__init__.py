"""Shell completion that answers without importing typer, pydantic or the kubernetes client.

The shell runs `ktrain` on every TAB, so this package reads a command tree generated from the
typer app at build time (`tree.json`, kept in sync by a test) and asks small value providers
for option values. Regenerate the tree and the static scripts with
`python -m ktrain.completion.generate`.
"""
