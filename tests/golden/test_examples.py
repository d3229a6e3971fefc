"""The Flux scripts rendered for upstream's examples carry the values upstream derives (ENGINE.md §6.6).

The golden cases under cases/examples/flux-* compare the scripts for presence only (ktrain writes
its own scripts around upstream's `%s` values), so the derived values are checked here:
hostlist, `flux R encode` resource flags, `flux run` flags and the broker addresses.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

EXAMPLES = Path(__file__).parent / "cases" / "examples"


def _scripts(cli, case: str) -> dict[str, str]:  # type: ignore[no-untyped-def]
    result = cli(
        "job",
        "render",
        "-f",
        str(EXAMPLES / case / "trainjob.yaml"),
        "--runtime-file",
        str(EXAMPLES / case / "runtime.yaml"),
    )
    assert result.exit_code == 0, result.stderr
    config_map = next(d for d in yaml.safe_load_all(result.stdout) if d and d["kind"] == "ConfigMap")
    return config_map["data"]


@pytest.mark.parametrize(
    ("case", "job", "hosts", "rspec", "flags"),
    [
        # numNodes 2, trainer.numProcPerNode 1, one GPU per node: -g and --gpu appear.
        ("flux-lammps-train-gpus", "lammps-flux", "lammps-flux-node-0-[0-1]", "--cores=0 --gpu=0", "-N 2 -n 2 -g 1"),
        # numNodes 4, policy numProcPerNode defaults to 1 (CRD default), no GPU.
        (
            "flux-interactive",
            "lammps-flux-interactive",
            "lammps-flux-interactive-node-0-[0-3]",
            "--cores=0",
            "-N 4 -n 4",
        ),
        # numNodes 2, trainer.numProcPerNode 4, no resources: 4 cores per node, 8 tasks in total.
        ("flux-lammps-train-job", "lammps-flux", "lammps-flux-node-0-[0-1]", "--cores=0-3", "-N 2 -n 8"),
    ],
)
def test_flux_example_scripts_carry_the_upstream_values(
    cli,
    case: str,
    job: str,
    hosts: str,
    rspec: str,  # type: ignore[no-untyped-def]
    flags: str,
) -> None:
    scripts = _scripts(cli, case)
    init, entrypoint = scripts["init.sh"], scripts["entrypoint.sh"]
    assert f'hosts="{hosts}"' in init
    assert f'{{ host = "{hosts}" }}' in init
    assert f'default_connect = "tcp://%h.{job}.default.svc.cluster.local:%p"' in init
    assert 'default_bind = "tcp://eth0:%p"' in init
    assert 'queue-policy = "fcfs"' in init
    assert f" {rspec} > /tmp/R" in entrypoint
    assert ("--gpu=" in entrypoint) == ("--gpu" in rspec)
    assert f'main_host="{job}-node-0-0"' in entrypoint
    assert f'flags="{flags}"' in entrypoint


@pytest.mark.parametrize("case", ["yaml-01-multi-node", "yaml-02-runtime-patches", "yaml-03-kueue-suspended"])
def test_examples_render_the_same_with_the_bundled_torch_distributed_runtime(cli, case: str) -> None:  # type: ignore[no-untyped-def]
    """Without --runtime-file the bundled torch-distributed (upstream base + overlay) is used."""
    with_file = cli(
        "job",
        "render",
        "-f",
        str(EXAMPLES / case / "trainjob.yaml"),
        "--runtime-file",
        str(EXAMPLES / case / "runtime.yaml"),
    )
    bundled = cli("job", "render", "-f", str(EXAMPLES / case / "trainjob.yaml"))
    assert with_file.exit_code == bundled.exit_code == 0, bundled.stderr
    assert bundled.stdout == with_file.stdout
