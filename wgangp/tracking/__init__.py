"""MLflow plumbing: the store and its URI, the run's tracker (a background worker with an outbox
for outages), secrets kept out of everything logged, environment tags, the ablation table."""
