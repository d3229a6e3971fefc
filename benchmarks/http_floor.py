"""The http.client floor: the cheapest correct program that makes the HTTP requests a ktrain
command made, for the cluster rows of benchmarks/run.py.

Why it exists: ktrain frames HTTP with the standard library's `http.client` (the project's
standard: ktrain/cluster/http_transport.py says why), and merely importing `http.client`
(it imports the `email` package) costs 12-15 ms on 2 cores, a quarter of a `kubectl get` against
the double. This script measures what an http.client program costs at the least, that import
included. `run.py` records the requests of one ktrain run from the API-server double
and times this script beside ktrain and kubectl: ktrain/floor is what ktrain itself costs.

    python benchmarks/http_floor.py SPEC.json

SPEC: {"server": "https://127.0.0.1:PORT", "ca_pem": "PEM" or null, "token": "..." or null,
"requests": [[method, target, status, {header: value}, body or null], ...]}, `target` the path
and query exactly as ktrain sent them, `status` what ktrain got (a `job delete` legitimately
gets 404s for the objects that are not there). One connection, kept alive; the requests in
order; every body read, and decoded when it is JSON. Exits 1 at the first answer whose status
is not the one ktrain got. Standard library only (no ktrain, no YAML parser).

Cheapest also means the interpreter tuning ktrain's launcher has (ktrain/launcher.py): no
collections of garbage cycles over start-up's objects (ktrain raises the threshold to 100,000;
here the collector is off) and none at exit (gc.freeze), ~5 ms between them, and the host name
passed as bytes, which spares the idna codec's import (~1 ms).
"""

import gc
import sys


def main() -> int:
    # imported here, after gc.disable(): their objects are what the collector would walk
    import http.client
    import json
    import socket
    import ssl

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
    gc.disable()
    code = main()
    gc.freeze()  # the process ends here: no collection over every object on the way out
    sys.exit(code)
