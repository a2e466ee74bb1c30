"""The entity-level differential-privacy parts: the privacy accountant and the mechanisms."""
