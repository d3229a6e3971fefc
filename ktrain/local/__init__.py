"""Running a rendered job on this machine (`ktrain job run --local`): `ktrain.local.plan` turns the
rendered objects into local pods (pure), `ktrain.local.runner` runs them, `ktrain.local.run` ties
the two together for the CLI and the Python API."""
