"""Which sources are visited again (Avrachenkov & Borkar): the restless bandit of
ephemeral content and its Whittle index (`ephemeral`), its thresholds learned online
(`lspe`) and the sources' parameters learned from their re-visits (`source_rates`)."""
