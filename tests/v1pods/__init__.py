"""What each pod of a Training Operator v1 job sees, twice: as the v1 controllers computed it
(`model`, a small transcription of their code) and as a converted job's rendered JobSet gives it
(`pods`, JobSet's labels, the downward API, the kubelet's `$(VAR)` rule and ktrain's shell
wrappers run with stub programs)."""
