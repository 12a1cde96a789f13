#!/usr/bin/env python3
"""A stand-in for KataGo in `miai bench --versus` tests; standalone on purpose (imports nothing of miai).

Started as `fake_katago.py gtp -model MODEL -config CONFIG`, it appends its argv, the config file's text and every
command it receives to the file named by $FAKE_KATAGO_LOG, answers `genmove` with `pass` after sleeping
$FAKE_KATAGO_SLEEP seconds (default 0.01), and answers `? ...` to the command named by $FAKE_KATAGO_REJECT.
"""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    log = open(os.environ["FAKE_KATAGO_LOG"], "a", encoding="utf-8")  # noqa: SIM115
    args = sys.argv[1:]
    log.write("ARGV " + " ".join(args) + "\n")
    config = args[args.index("-config") + 1]
    with open(config, encoding="utf-8") as f:
        log.write("CONFIG " + " | ".join(line.strip() for line in f if line.strip()) + "\n")
    log.flush()
    reject = os.environ.get("FAKE_KATAGO_REJECT", "")
    sleep = float(os.environ.get("FAKE_KATAGO_SLEEP", "0.01"))
    for line in sys.stdin:
        command = line.strip()
        if not command:
            continue
        log.write("CMD " + command + "\n")
        log.flush()
        words = command.split()
        ident = words[0] if words[0].isdigit() else ""
        name = words[1] if ident else words[0]
        if name == reject:
            print(f"?{ident} rejected by the fake\n", flush=True)
        elif name == "genmove":
            time.sleep(sleep)
            print(f"={ident} pass\n", flush=True)
        elif name == "quit":
            print(f"={ident}\n", flush=True)
            return
        else:
            print(f"={ident}\n", flush=True)


if __name__ == "__main__":
    main()
