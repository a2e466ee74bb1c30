"""A table's features into the networks' space and back: scales, layout, the stored transform."""
