"""gloo all-reduce of each rank's number: every rank must print the same sum."""

import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
value = torch.tensor([float(rank)])
dist.all_reduce(value)
sys.stdout.write(f"rank {rank}/{world} sum {value.item():g}\n")
sys.stdout.flush()
dist.destroy_process_group()
