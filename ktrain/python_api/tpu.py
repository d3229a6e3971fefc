"""`ktrain.get_tpu_num_nodes`: the Kubeflow SDK's helper (`kubeflow.trainer.get_tpu_num_nodes`) that
gives a multi-slice TPU job's `num_nodes` from its slices and topology, with the SDK's checks and
messages (its ValueErrors are `UsageError`s, which are ValueErrors)."""

from __future__ import annotations

from ktrain.errors import UsageError
from ktrain.python_api import arguments as a


def get_tpu_num_nodes(num_slices: int, topology: str, chips_per_host: int = 4) -> int:
    """The hosts (nodes) of `num_slices` TPU slices of `topology` ("2x2", "2x4", "2x2x2", ...),
    `chips_per_host` chips each (4 on ct6e-standard-4t, 8 on ct6e-standard-8t)."""
    slices = a.integer(num_slices, "num_slices", minimum=-(2**63), maximum=2**63)
    per_host = a.integer(chips_per_host, "chips_per_host", minimum=-(2**63), maximum=2**63)
    shape = a.optional_text(topology, "topology")
    if slices <= 0:
        raise UsageError(f"num_slices must be positive, got: {slices}")
    if per_host <= 0:
        raise UsageError(f"chips_per_host must be positive, got: {per_host}")
    if not shape:
        raise UsageError("TPU topology must be specified.")
    try:
        dims = [int(d) for d in shape.lower().split("x")]
    except ValueError:
        raise UsageError(
            f"Invalid topology format: '{shape}'. Must be formatted as 'AxB' or 'AxBxC' (e.g. '2x2', '2x2x2')."
        ) from None
    if len(dims) not in (2, 3):
        raise UsageError(
            f"Invalid topology format: '{shape}'. Must contain exactly 2 or 3 dimensions (e.g. '2x2', '2x2x2')."
        )
    if any(dim <= 0 for dim in dims):
        raise UsageError(f"TPU topology dimensions must be positive, got: '{shape}'.")
    chips = 1
    for dim in dims:
        chips *= dim
    if chips < per_host:
        hosts = 1
    elif chips % per_host != 0:
        raise UsageError(
            f"Total TPU chips in slice ({chips}) must be cleanly divisible by chips_per_host ({per_host})."
        )
    else:
        hosts = chips // per_host
    return slices * hosts
