"""A rank check that needs nothing but the environment and sockets.

Rank 0 listens on MASTER_ADDR:MASTER_PORT; every rank connects and sends its RANK and
WORLD_SIZE; rank 0 prints what it saw. Under torchrun, whose agent already serves a store on
MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE), the check listens on the next port instead.
"""

import os
import socket
import sys
import time

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True":
    port += 1
if rank == 0:
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((addr, port))
    server.listen(world)
deadline = time.monotonic() + 60
while True:
    try:
        client = socket.create_connection((addr, port), timeout=5)
        break
    except OSError:
        if time.monotonic() > deadline:
            raise
        time.sleep(0.05)
client.sendall(f"{rank} {world}\n".encode())
client.close()
if rank == 0:
    seen = []
    for _ in range(world):
        conn, _ = server.accept()
        seen.append(conn.makefile().readline().split())
        conn.close()
    ranks, worlds = " ".join(sorted(r for r, _ in seen)), " ".join(sorted({w for _, w in seen}))
    sys.stdout.write(f"ranks {ranks} worlds {worlds}\n")
    sys.stdout.flush()
