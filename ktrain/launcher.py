"""The console script: answer shell completion and renders before anything heavy is imported.

The shell runs `ktrain` on every TAB press; importing typer (and through it pydantic) would
cost more than the whole answer, so completion requests are dispatched here first. Likewise
`--help` of any command, and the frequent commands (`job render`, `render`, `job validate`,
`job init`, `runtime list`, `runtime show`, and on a cluster `job create | list | get | logs |
wait | delete`) go to the typer-free fast path (`ktrain.cli.fastpath`), which either handles the
command completely or declines and lets the typer app run.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys

# The young generation's threshold: a collection per 100,000 new container objects (Python's
# default: 700).
START_UP_THRESHOLD = 100_000


def run() -> None:
    # Start-up makes tens of thousands of objects that live until exit (modules, classes,
    # functions); at the collector's default pace (a young-generation collection every 700 new
    # objects) a cluster command walks them some 35 times before its first request: 3-4 ms of a
    # 60 ms `job get` (issue #32). Collections still run, 140 times less often, so a long
    # `job logs -f` or `job watch` still frees its garbage cycles.
    gc.set_threshold(START_UP_THRESHOLD, *gc.get_threshold()[1:])
    # What the command made lives until the process ends: leave it to the OS, rather than have the
    # interpreter's exit walk every object for garbage cycles first (2-5 ms of a render, issue #17).
    atexit.register(gc.freeze)
    if os.environ.get("_KTRAIN_COMPLETE"):
        from ktrain.completion.complete import main as complete

        answered = complete()  # the answer is written and flushed: skip the interpreter's shutdown (~1 ms)
        os._exit(answered)
    # ktrain's models are internal: no third-party pydantic plugin should hook into them, and
    # looking plugins up scans every installed distribution's metadata (5-10 ms per command).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from ktrain.cli.fastpath import try_fast

    code = try_fast(sys.argv[1:])
    if code is not None:
        sys.exit(code)
    from ktrain.cli import run as run_cli

    run_cli()
