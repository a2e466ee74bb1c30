"""Training: the job's MLflow run and checkpoints (session), the host loop, the compiled step
with its in-graph NaN guard and batches, and what a finished run exports."""
