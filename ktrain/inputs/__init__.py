"""Inputs: YAML documents with their positions, the runtime registry, the parse cache, SSH keys, bundled files."""
