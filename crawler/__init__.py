"""A topic-focused web crawler service; `crawler/` wires the policies and the storage."""

__version__ = "0.1.0"

__all__ = ["__version__"]
