"""Use cases, composed from the layers below; never printing. One module per use case, which the
CLI and the Python API both call:

- `ktrain.service.requests`: what they take and give (`JobOverrides`, `RenderRequest`, outcomes);
- `ktrain.service.job`: a job file and/or flags → the TrainJob and its runtime, built from
  `job_file` (reading, templates), `conversion` (v1 jobs in memory), `runtimes` (lookup),
  `overrides` (flags), `naming` (derived names) and `code` (`--code` / `--pip`);
- `ktrain.service.render`, `ktrain.service.validate`, `ktrain.service.explain`,
  `ktrain.service.convert`: the commands' use cases.

Nothing is re-exported here: importing `ktrain.service.render` loads only what a render needs.
"""
