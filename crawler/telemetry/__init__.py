"""What a running crawl tells: Prometheus metrics and their server, the timeline of
samples kept in the database, the health check."""
