"""`job why`: the diagnosis (`ktrain.jobs.why.diagnosis.diagnose`) and its areas, one module each."""
