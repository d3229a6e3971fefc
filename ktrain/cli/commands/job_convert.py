"""`ktrain job convert`: Training Operator v1 jobs -> TrainJob YAML (+ a generated runtime), with a
migration report on stderr. The conversion itself is `ktrain.convert` (pure)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from ktrain.cli.common import note
from ktrain.cli.spec import Option, command
from ktrain.errors import UsageError

if TYPE_CHECKING:
    from typing import Annotated

REPORT_FORMATS = ("table", "json", "none")


@command("job", "convert")
def convert_job(
    filename: Annotated[
        str, Option("-f", "--filename", help="A v1 job file: one job, several documents or a List (- for stdin).")
    ],
    runtime: Annotated[
        str | None,
        Option("--runtime", "-r", help="Put the jobs on this existing runtime instead of a bundled or generated one."),
    ] = None,
    output: Annotated[str, Option("-o", "--output", help="yaml | json (a List) of the converted objects.")] = "yaml",
    report: Annotated[
        str | None,
        Option("--report", help="table | json | none: the migration report on stderr (default: json with -o json)."),
    ] = None,
) -> None:
    """Convert Training Operator v1 jobs (PyTorchJob, TFJob, MPIJob, XGBoostJob, JAXJob, PaddleJob, MXJob) to TrainJobs.

    Prints the TrainJob(s), and a TrainingRuntime generated from the v1 pod templates when no bundled
    runtime fits; the report on stderr says where every v1 field went, or why it was dropped.
    """
    from ktrain.convert.report import as_json, format_table
    from ktrain.service.convert import convert_file

    if output not in ("yaml", "json"):
        raise UsageError(f"unknown output format {output!r}: use yaml or json")
    report = report or ("json" if output == "json" else "table")
    if report not in REPORT_FORMATS:
        raise UsageError(f"--report must be table, json or none, got {report!r}")
    outcome = convert_file(filename, runtime)
    if report == "json":
        # stderr holds the report alone, so a script can parse it: the notes are entries too.
        entries = [*({"converted": False, "note": n} for n in outcome.notes), *outcome.entries]
        sys.stderr.write(as_json(entries))
    else:
        from ktrain.output.errors import format_error

        for message in outcome.notes:
            note(message)
        if report == "table":
            from ktrain.service.convert import ConvertFailure

            for item in outcome.items:
                if isinstance(item, ConvertFailure):
                    sys.stderr.write(format_error(item.error) + "\n")
                    continue
                why = ""
                if item.runtime is not None and item.reason:
                    why = f"\n  runtime generated because: {item.reason}"
                sys.stderr.write(format_table(item.title() + why, item.rows) + "\n")
        else:
            for failure in outcome.failures:
                sys.stderr.write(format_error(failure.error))
    if output == "json":
        sys.stdout.write(json.dumps({"apiVersion": "v1", "kind": "List", "items": outcome.objects}, indent=2) + "\n")
    else:
        from ktrain.authoring.templating import marked_plain
        from ktrain.output.yamltext import dump_all

        sys.stdout.write(marked_plain(dump_all(outcome.objects)))  # a v1 value's `{{` is text
    if outcome.failures:
        from ktrain.errors import AlreadyReported

        n, total = len(outcome.failures), len(outcome.failures) + len(outcome.conversions)
        raise AlreadyReported(f"{n} of {total} jobs did not convert")
