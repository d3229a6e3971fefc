"""The ML policies ktrain renders, each declared once: every list of frameworks derives from here.

A runtime's `spec.mlPolicy` sets at most one of these keys (besides `numNodes`); the render runs
that policy's plugin, else PlainML's. The key names everything else: the field of
`ktrain.api.runtime.MLPolicy` (whose type is the `source` model), the plugin module
`ktrain.engine.plugins.<key>` (whose `plugin` class has that `name` and `policy_key`), the golden
cases `tests/golden/cases/<key>/` and the unit tests `tests/unit/engine/plugins/test_<key>.py`.
What reads a list of policies derives it from `ML_POLICIES`: the models' `policy_keys`, the plugin
registry (`ktrain.engine.plugins`), `runtime list`, `job init`, `--explain` and the local runner.
tests/unit/api/test_policies.py fails when any list of policies disagrees with this one
(docs/architecture.md, "Adding an ML policy").

On the render path: plain data, no import beyond `ktrain.util.structs`.
"""

from __future__ import annotations

from ktrain.util.structs import struct


@struct(frozen=True, slots=True)
class MLPolicySpec:
    """One ML policy: the key of `spec.mlPolicy` that selects it and what each list needs of it."""

    key: str  # the mlPolicy key; also the plugin's module, `name` and `policy_key`
    plugin: str  # the plugin class in `ktrain.engine.plugins.<key>`
    source: str  # the model of `spec.mlPolicy.<key>` in `ktrain.api.runtime` ("" for PlainML)
    # What a command usually looks like on this policy: `job init`'s comment, never a default.
    example_command: tuple[str, ...] = ("python", "train.py")
    # `runtime list`'s PROCS/NODE when the policy's settings have no `numProcPerNode`.
    procs_per_node: str = "-"

    @property
    def module(self) -> str:
        """The plugin's module, `ktrain.engine.plugins.<module>`."""
        return self.key


# In selection order: a runtime setting two keys is refused (`ktrain.engine.validation`), so the
# order decides nothing a valid runtime can see; it is the order lists show the policies in.
ML_POLICIES = (
    MLPolicySpec("torch", "TorchPlugin", "TorchMLPolicySource", ("torchrun", "train.py"), procs_per_node="auto"),
    MLPolicySpec("mpi", "MPIPlugin", "MPIMLPolicySource", ("mpirun", "python", "train.py")),
    MLPolicySpec("jax", "JAXPlugin", "JAXMLPolicySource"),
    MLPolicySpec("xgboost", "XGBoostPlugin", "XGBoostMLPolicySource"),
    MLPolicySpec("flux", "FluxPlugin", "FluxMLPolicySource"),
)
# What runs when a runtime sets none of them (upstream's PlainML plugin).
PLAIN_ML = MLPolicySpec("plainml", "PlainMLPlugin", "")

ML_POLICY_KEYS = tuple(p.key for p in ML_POLICIES)
BY_KEY = {p.key: p for p in (*ML_POLICIES, PLAIN_ML)}


def policy_named(key: str | None) -> MLPolicySpec:
    """The declaration of policy `key` (PlainML's for None)."""
    return BY_KEY[key or PLAIN_ML.key]


__all__ = ["BY_KEY", "ML_POLICIES", "ML_POLICY_KEYS", "PLAIN_ML", "MLPolicySpec", "policy_named"]
