"""Talking to the web: fetching through the network guard, robots.txt, each host's
politeness and turns, a URL's visit from request to final answer, canonical URLs."""
