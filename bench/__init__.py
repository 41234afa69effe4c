"""The benchmarks a maintainer runs: `python -m bench NAME [ARGS]` from the checkout's
root (`python -m bench` lists them). Each prints a table; most keep every run as JSON
(`--json`)."""
