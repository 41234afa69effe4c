"""A fetched visit's fate: tried again, lost to a full queue, or queued for the
processor."""
