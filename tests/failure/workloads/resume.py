"""A training loop that checkpoints each step and resumes from the last checkpoint (issue #35).

Env: FAIL_CODE (default 1) is the code rank 1 exits with at step 5 of attempt 0 (FAIL_ALWAYS=1:
of every attempt); rank 0 records its pid and, on attempt 0, waits (to be stopped by the restart).
"""
# ruff: noqa: T201 (a workload: its output is what the test reads)

import json
import os
import pathlib
import sys
import time

directory = pathlib.Path(os.environ["KTRAIN_CHECKPOINT_DIR"])
attempt = int(os.environ["KTRAIN_RESTART_ATTEMPT"])
rank = os.environ.get("PET_NODE_RANK", os.environ.get("JOB_COMPLETION_INDEX", "0"))
checkpoint = directory / f"rank{rank}.json"
step = json.loads(checkpoint.read_text())["step"] if checkpoint.exists() else 0
print(f"attempt {attempt} rank {rank} resumes at step {step}", flush=True)
(directory / f"pid-{rank}-{attempt}").write_text(str(os.getpid()))
for s in range(step, 10):
    if rank == "1" and s == 5 and (attempt == 0 or os.environ.get("FAIL_ALWAYS") == "1"):
        print(f"rank 1 fails at step {s}", flush=True)
        sys.exit(int(os.environ.get("FAIL_CODE", "1")))
    checkpoint.write_text(json.dumps({"step": s + 1}))
    time.sleep(0.05)
if rank == "0" and attempt == 0:
    time.sleep(120)  # still running when rank 1 fails: the restart must stop it
print(f"rank {rank} done at step 10", flush=True)
