"""One training step, compiled: the batch drawn in the graph, n_critic critic updates and one
generator update, each judged by the in-graph NaN guard; the replica strategy that splits it."""
