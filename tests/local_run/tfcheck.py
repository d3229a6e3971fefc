"""A TF_CONFIG check without TensorFlow: this task listens on its own address from TF_CONFIG,
reaches every other task's address, and waits until every other task has reached it."""

import json
import os
import socket
import sys
import threading
import time

config = json.loads(os.environ["TF_CONFIG"])
task, cluster = config["task"], config["cluster"]
mine = cluster[task["type"]][task["index"]]
peers = [a for hosts in cluster.values() for a in hosts if a != mine]
host, port = mine.rsplit(":", 1)
server = socket.socket()
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((host, int(port)))
server.listen(16)


def accept() -> None:
    for _ in peers:
        server.accept()[0].close()


waiter = threading.Thread(target=accept)
waiter.start()
for peer in peers:
    h, p = peer.rsplit(":", 1)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection((h, int(p)), timeout=5).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
waiter.join()
sys.stdout.write(f"{task['type']} {task['index']} at {mine} reached {len(peers)} peers\n")
