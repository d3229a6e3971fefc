"""Each MPI rank writes into its working directory (a writable copy of the code, as in the pod)."""

import os

rank = os.environ["OMPI_COMM_WORLD_RANK"]
os.makedirs("checkpoints", exist_ok=True)
with open(os.path.join("checkpoints", f"rank-{rank}"), "w") as f:
    f.write(rank)
os.write(1, f"rank {rank} wrote {sorted(os.listdir('.'))}\n".encode())
