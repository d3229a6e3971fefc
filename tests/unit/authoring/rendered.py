"""Shared by the authoring tests that read `ktrain job render` output."""

from __future__ import annotations

import yaml


def _jobset(text: str) -> dict:
    return [d for d in yaml.safe_load_all(text) if d][-1]


def _node(jobset: dict) -> dict:
    return jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
