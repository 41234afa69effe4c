"""From a fetched page to its stored row: parsing, scoring, the frontier's database
side, the storage writer and the WARC files."""
