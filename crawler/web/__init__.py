"""The daemon's HTTP API and web page (docs/api.md)."""

from crawler.web.api import Api
from crawler.web.app import build_app
from crawler.web.openapi import openapi_document

__all__ = ["Api", "build_app", "openapi_document"]
