"""`job convert` keeps a v1 job's `{{`, `{%` and `{#` as text, and ktrain's own render of its
output reads them so (issue #37, item 9b): a job file that uses `{{` / `{%` is a template, so the
output says on its first line that it is not one; kubectl, which applies the same output, reads
that line as a comment and the values as written."""

from __future__ import annotations

import json

import pytest
import yaml

from ktrain.authoring.templating import NOT_A_TEMPLATE, is_template

ARGS = ["--greeting={{ name }}", "{% if x %}y{% endif %}", "{# not a comment #}", "{{{", "}}"]

V1 = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "braces"},
    "spec": {
        "pytorchReplicaSpecs": {
            "Worker": {
                "replicas": 2,
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "pytorch",
                                "image": "img:1",
                                "command": ["python", "train.py"],
                                "args": ARGS,
                                "env": [{"name": "TEMPLATE", "value": "{{ jinja }} {% raw %} {#"}],
                            }
                        ]
                    }
                },
            }
        }
    },
}


def containers(objects: list[dict]) -> list[dict]:
    (jobset,) = [o for o in objects if o.get("kind") == "JobSet"]
    return [
        c for r in jobset["spec"]["replicatedJobs"] for c in r["template"]["spec"]["template"]["spec"]["containers"]
    ]


@pytest.mark.parametrize("runtime", [None, "generated"])
def test_convert_output_with_braces_renders_the_v1_args_and_env_as_written(cli, tmp_path, runtime) -> None:
    v1 = json.loads(json.dumps(V1))
    if runtime == "generated":  # a sidecar needs a generated runtime: the values go into its template
        pod = v1["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]
        pod["containers"].append({"name": "side", "image": "side:1", "args": ["{{ side }}"]})
    source = tmp_path / "v1.yaml"
    source.write_text(yaml.safe_dump(v1))
    converted = cli("job", "convert", "-f", str(source), "--report", "none")
    assert converted.exit_code == 0, converted.stderr
    assert converted.stdout.startswith(NOT_A_TEMPLATE)
    (trainjob_file := tmp_path / "trainjob.yaml").write_text(converted.stdout)
    for how in (("-f", str(trainjob_file)), ("-f", "-")):
        rendered = cli("job", "render", *how, stdin=converted.stdout)
        assert rendered.exit_code == 0, rendered.stderr
        objects = list(yaml.safe_load_all(rendered.stdout))
        node = next(c for c in containers(objects) if c["name"] == "node")
        assert [*node.get("command", []), *node.get("args", [])][-len(ARGS) :] == ARGS
        env = {e["name"]: e.get("value") for e in node.get("env") or []}
        assert env["TEMPLATE"] == "{{ jinja }} {% raw %} {#"
        if runtime == "generated":
            side = next(c for c in containers(objects) if c["name"] == "side")
            assert side["args"] == ["{{ side }}"]
    # what kubectl applies: the same objects, the first line a comment
    assert yaml.safe_load_all(converted.stdout)


def test_convert_output_without_braces_is_unchanged(cli, tmp_path) -> None:
    v1 = json.loads(json.dumps(V1))
    container = v1["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    container["args"], container["env"] = ["--lr", "small"], []
    source = tmp_path / "v1.yaml"
    source.write_text(yaml.safe_dump(v1))
    converted = cli("job", "convert", "-f", str(source), "--report", "none")
    assert converted.exit_code == 0
    assert not converted.stdout.startswith("#")


def test_a_job_file_using_braces_is_still_a_template_unless_it_says_it_is_not() -> None:
    assert is_template("job.yaml", "name: x-{{ run }}\n")
    assert is_template("job.yaml.j2", f"{NOT_A_TEMPLATE}\nname: x-{{{{ run }}}}\n")  # .j2 is the user's word
    assert not is_template("job.yaml", f"{NOT_A_TEMPLATE}\nname: x-{{{{ run }}}}\n")
    assert is_template("job.yaml", f"name: x-{{{{ run }}}}\n{NOT_A_TEMPLATE}\n")  # on the first line only
