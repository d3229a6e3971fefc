"""A small stand-in for torchrun (for machines without torch): starts PET_NPROC_PER_NODE
workers with the environment torchrun gives them (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_*)."""

import os
import subprocess
import sys

nproc = int(os.environ["PET_NPROC_PER_NODE"])
nodes = int(os.environ["PET_NNODES"])
node = int(os.environ["PET_NODE_RANK"])
workers = []
for local in range(nproc):
    env = dict(
        os.environ,
        RANK=str(node * nproc + local),
        LOCAL_RANK=str(local),
        WORLD_SIZE=str(nproc * nodes),
        LOCAL_WORLD_SIZE=str(nproc),
        MASTER_ADDR=os.environ["PET_MASTER_ADDR"],
        MASTER_PORT=os.environ["PET_MASTER_PORT"],
    )
    workers.append(subprocess.Popen([sys.executable, *sys.argv[1:]], env=env))
sys.exit(max(w.wait() for w in workers))
