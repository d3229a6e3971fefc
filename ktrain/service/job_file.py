"""Reading a job file: YAML, a jinja2 template with its values, or a Training Operator v1 job
converted in memory.
"""

from __future__ import annotations

from ktrain import constants as c
from ktrain.errors import (
    InputError,
    UsageError,
)
from ktrain.inputs.documents import (
    Document,
    load_documents,
)
from ktrain.inputs.registry import RuntimeEntry
from ktrain.service.conversion import converted_document

TYPE_CHECKING = False  # fast path, no `typing` at run time: docs/architecture.md, "The fast path"

if TYPE_CHECKING:
    from ktrain.authoring.set_paths import Assignment
    from ktrain.convert import Conversion


def read_text(path: str, what: str = "file") -> str:
    """An input file's text (`-`: stdin), bounded and checked: see ktrain.inputs.reading."""
    from ktrain.inputs.reading import read_input

    return read_input(path, what=what)


def same_file_runtimes(doc: Document) -> list[RuntimeEntry]:
    """(Cluster)TrainingRuntime documents that came in the job's own file (what `ktrain job
    convert` prints with a TrainJob): they win over every other source for this job."""
    from ktrain.inputs.registry import load_runtime_documents

    return load_runtime_documents(doc.siblings, "file", doc.file)


def load_job_input(
    path: str,
    values_files: list[str] | None = None,
    template_sets: list[Assignment] | None = None,
    runtime: str | None = None,
    *,
    warnings: list[str] | None = None,
    text: str | None = None,
) -> tuple[Document, Conversion | None]:
    """The TrainJob document of a file (or of `text`, labelled `path`), and the conversion that
    made it when the file holds a Training Operator v1 job instead (converted in memory, its
    positions kept for errors)."""
    from ktrain.authoring.templating import is_template

    label = "<stdin>" if path == "-" else path
    if text is None:
        text = read_text(path, "job file")
    if is_template(path, text):
        from ktrain.authoring.set_paths import nest, template_value
        from ktrain.authoring.templating import load_values, render_template, rendered_label

        values = load_values([(f, read_text(f, "values file")) for f in values_files or []])
        for assignment in template_sets or []:
            nest(values, *template_value(assignment))
        rendered = render_template(text, label, values)
        if template_sets and warnings is not None:
            from ktrain.authoring.templating import unused_values

            warnings += unused_values(text, label, [str(a.parts[0]) for a in template_sets])
        docs = load_documents(rendered, rendered_label(label, text, rendered))
    else:
        reject_template_inputs(label, values_files, template_sets)
        docs = load_documents(text, label)
    jobs = [d for d in docs if isinstance(d.data, dict) and d.data.get("kind") == c.TRAINJOB_KIND]
    if not jobs:
        from ktrain.convert import convert_documents, job_paths

        if any(job_paths(d) for d in docs):
            conversions = convert_documents(docs, runtime=runtime)
            if len(conversions) > 1:
                second = conversions[1]
                raise second.document.error(
                    f"more than one job in this file ({len(conversions)}); ktrain renders one job at a time",
                    second.base,
                    hint="split the file, or see them all with `ktrain job convert -f FILE`",
                )
            if warnings is not None:
                warnings += left_out(docs, conversions[0].document)
            return converted_document(conversions[0]), conversions[0]
        if docs:
            raise docs[0].error(
                "no TrainJob in this file (kind: TrainJob, apiVersion: trainer.kubeflow.org/v1alpha1)", ("kind",)
            )
        raise InputError("the file is empty", file=path)
    if len(jobs) > 1:
        raise jobs[1].error("more than one TrainJob in this file; ktrain renders one job at a time")
    jobs[0].siblings = [d for d in docs if isinstance(d.data, dict) and d.data.get("kind") in c.RUNTIME_KINDS]
    return jobs[0], None


def left_out(docs: list[Document], job: Document) -> list[str]:
    """The documents beside a v1 job that the render does not use (a Service, a Deployment, a
    scalar): said, not silently dropped."""
    out = []
    for i, doc in enumerate(docs):
        if doc is job or doc.data is None:
            continue
        data = doc.data
        if isinstance(data, dict):
            name = (data.get("metadata") or {}).get("name", "") if isinstance(data.get("metadata"), dict) else ""
            what = f"{data.get('kind', 'a document')} {name}".strip()
        else:
            what = "a list" if isinstance(data, list) else "a scalar"
        line = doc.positions.get((), (None,))[0]
        where = f"{doc.file}:{line}" if line else doc.file
        out.append(f"{where}: document {i + 1} ({what}) is not part of the job: left out (apply it separately)")
    return out


def reject_template_inputs(
    file: str | None, values_files: list[str] | None, template_sets: list[Assignment] | None
) -> None:
    """--values and non-job --set keys only mean something for a template."""
    what = f"{file} is not a template" if file else "there is no job template (-f)"
    if values_files:
        raise UsageError(
            f"--values needs a job template: {what}", hint="a template is a *.j2 file or one that uses {{ ... }}"
        )
    for assignment in template_sets or []:
        from ktrain.authoring.set_paths import closest_field

        head = str(assignment.parts[0])
        close = closest_field(head)
        raise InputError(
            f"{head!r} is not a TrainJob field, and {what} that could use it as a value",
            file="--set",
            column=1,
            source_line=assignment.text,
            hint=f"did you mean {close!r}?"
            if close
            else "job fields: trainer.numNodes, trainer.env[name=X].value, runtimeRef.name, ...",
        )
