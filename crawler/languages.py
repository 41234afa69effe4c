"""The languages a page may be found in: the ISO 639-1 codes among the languages of the
detector's model (`crawler.process.language`; its others have three letters), which
`--language` is checked against at start."""

from __future__ import annotations

LANGUAGES = frozenset(
    """
    af am an ar as az ba be bg bn br bs ca cs cy da de dz el en eo es et eu fa fi fo fr fy
    ga gd gl gu ha he hi hr ht hu hy id ig is it ja jv ka kk km kn ko ku ky la lb lg ln lo
    lt lv mg mk ml mn mr ms mt my ne nl nn no oc om or pa pl ps pt qu ro ru rw sa se si sk
    sl sn so sq sr st sv sw ta te tg th tk tl tr tt ug uk ur uz vi vo wa xh yo zh zu
    """.split()  # noqa: SIM905 (114 codes read better as text)
)
