"""The daemon's HTTP API and web page (docs/api.md)."""
