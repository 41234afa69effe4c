"""The storage writer: batched transactions on a thread of their own, the WARC files
written before them."""
