"""Authoring: job templates, `--set` paths, the `job init` starter, `--explain`, JSON Schemas."""
