"""Transaction histories: each entity's rows in time order, and whether behavior survives."""
