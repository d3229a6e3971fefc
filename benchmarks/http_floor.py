"""The http.client floor: the cheapest correct program that makes the HTTP requests a ktrain
command made, for the cluster rows of benchmarks/run.py.

Why it exists: ktrain frames HTTP with the standard library's `http.client` (the project's
standard: ktrain/cluster/http_transport.py says why), and merely importing `http.client`
(it imports the `email` package) costs ~12 ms on 2 cores, a tenth of a `kubectl get`. So no
http.client program can be as fast as kubectl on a request or two; this script measures how
close one can get. `run.py` records the requests of one ktrain run from the API-server double
and times this script beside ktrain and kubectl: ktrain/floor is what ktrain itself costs.

    python benchmarks/http_floor.py SPEC.json

SPEC: {"server": "https://127.0.0.1:PORT", "ca_pem": "PEM" or null, "token": "..." or null,
"requests": [[method, target, status, {header: value}, body or null], ...]}, `target` the path
and query exactly as ktrain sent them, `status` what ktrain got (a `job delete` legitimately
gets 404s for the objects that are not there). One connection, kept alive; the requests in
order; every body read, and decoded when it is JSON. Exits 1 at the first answer whose status
is not the one ktrain got. Standard library only (no ktrain, no YAML parser).
"""

import http.client
import json
import socket
import ssl
import sys


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as f:
        spec = json.load(f)
    scheme, _, authority = spec["server"].partition("://")
    host, _, port = authority.rpartition(":")
    # Connected here rather than by http.client, with the name as bytes (as ktrain does):
    # getaddrinfo and ssl then skip the idna codec, whose import (unicodedata, stringprep) is ~1 ms.
    sock = socket.create_connection((host.encode("ascii"), int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    auth = {}
    if scheme == "https":
        context = ssl.create_default_context(cadata=spec["ca_pem"])
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        sock = context.wrap_socket(sock, server_hostname=host.encode("ascii"))
        conn: http.client.HTTPConnection = http.client.HTTPSConnection(host, int(port), context=context)
        if spec["token"]:
            auth = {"Authorization": "Bearer " + spec["token"]}
    else:
        conn = http.client.HTTPConnection(host, int(port))
    conn.sock = sock
    for method, target, status, headers, body in spec["requests"]:
        conn.request(method, target, body=body and body.encode(), headers={**headers, **auth})
        answer = conn.getresponse()
        data = answer.read()
        if answer.status != status:
            sys.stderr.write(f"{method} {target}: {answer.status} (ktrain got {status})\n")
            return 1
        if (answer.getheader("Content-Type") or "").startswith("application/json"):
            json.loads(data)
    conn.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
