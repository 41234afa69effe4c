"""Crawls replayed over a known graph (O'Meara & Patel, Section 6): the graph
(`link_graph`), the traversals (`traversals`) and the quality of a schedule, eq. 1-3
(`quality`)."""
