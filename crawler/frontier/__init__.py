"""What to fetch next: the frontier in memory and its database side, each host's
budget, the re-visits, and what a commit tells them."""
