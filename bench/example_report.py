"""The README's example report: a polite crawl of the testbed, drawn by `crawler report`.

The testbed (20,000 pages on 6 hosts, a few milliseconds of latency, the four sources of
Avrachenkov & Borkar's example publishing new items) runs in its own process; the
crawler runs `crawler run` for --seconds with a delay of 0.05 s a host, the MDP fetcher
pool and Whittle re-visits, then `crawler report` draws it with the ground truth.

    python bench/example_report.py [--seconds 180] [--out docs/report]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from testbed_process import served_testbed

PORT = 18_700
# Avrachenkov & Borkar's sources, xi halved as in bench/revisits.py; mu and Lambda a second
SOURCES = "xi,mu,Lambda\n0.5,0.14,2\n0.35,0.07,2\n0.1,0.14,2\n0.04,0.042,2\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--out", type=Path, default=Path("docs/report"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        sources = Path(scratch) / "sources.csv"
        sources.write_text(SOURCES)
        truth = Path(scratch) / "truth"
        options = ["--latency", "0.005", "--sources", str(sources), "--ground-truth", str(truth)]
        with served_testbed(port=PORT, pages=20_000, hosts=6, options=options) as (seed, hosts):
            db = f"sqlite+aiosqlite:///{scratch}/example.db"
            # source i is on host i (testbed.source_url)
            source_seeds = [f"http://{hosts[i]}:{PORT}/s/{i}" for i in range(4)]
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "crawler",
                    "run",
                    *(arg for url in [seed, *source_seeds] for arg in ("--seed", url)),
                    "--topic",
                    "solar energy",
                    "--db",
                    db,
                    "--duration",
                    str(args.seconds),
                    "--delay",
                    "0.05",
                    "--fetchers",
                    "mdp",
                    "--revisit",
                    "whittle",
                    "--revisit-period",
                    "5",
                    "--revisit-budget",
                    "2",
                    "--metrics-port",
                    "0",
                    "--allow-private-networks",
                    *(arg for host in hosts for arg in ("--allowed-domain", host)),
                ],
                check=True,
            )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "crawler",
                "report",
                "--db",
                db,
                "--ground-truth",
                str(truth),
                "--out",
                str(args.out),
            ],
            check=True,
        )


if __name__ == "__main__":
    main()
