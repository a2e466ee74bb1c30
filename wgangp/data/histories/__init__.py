"""A table as customers over time (``data.time``): one history per entity, ordered by time; which
columns are attributes, records and shared ids; windows; the networks' arrays."""
