"""A PADDLE_MASTER check without PaddlePaddle: rank 0 (the pod that has POD_IP_DUMMY, as v1 set
it) listens on PADDLE_MASTER, the others connect to it."""

import os
import socket
import sys
import time

host, port = os.environ["PADDLE_MASTER"].rsplit(":", 1)
nodes = int(os.environ["PADDLE_NNODES"])
if os.environ.get("POD_IP_DUMMY"):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, int(port)))
    server.listen(nodes)
    for _ in range(nodes - 1):
        server.accept()[0].close()
    sys.stdout.write(f"master at {host}:{port} met {nodes - 1} nodes\n")
else:
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=5).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
