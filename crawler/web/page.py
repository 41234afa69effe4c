"""The web page at `/`: one HTML file, one script, one style sheet, read from the
package once and served as they are (no build step, nothing from elsewhere). The
script inserts what a crawl found as text only, never as markup; the headers forbid
inline script and style, and anything not from the daemon itself."""

from __future__ import annotations

from importlib import resources

from aiohttp import web

# every answer of the daemon's server carries these (`add_security_headers`)
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",  # a link followed from a result says nothing of the daemon
}
FILES = {  # path -> (file in static/, content type)
    "/": ("index.html", "text/html"),
    "/static/app.js": ("app.js", "text/javascript"),
    "/static/app.css": ("app.css", "text/css"),
}


def static_file(name: str) -> bytes:
    return resources.files("crawler.web").joinpath("static", name).read_bytes()


def page_routes() -> list[web.RouteDef]:
    routes = []
    for path, (name, content_type) in FILES.items():
        body = static_file(name)

        async def handler(_request: web.Request, body: bytes = body, kind: str = content_type):
            return web.Response(body=body, content_type=kind, charset="utf-8")

        routes.append(web.get(path, handler))
    return routes


async def add_security_headers(_request: web.Request, response: web.StreamResponse) -> None:
    response.headers.update(SECURITY_HEADERS)
    response.headers.setdefault("Cache-Control", "no-store")
