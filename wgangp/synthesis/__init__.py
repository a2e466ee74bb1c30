"""After training: select the step (``selection``), assemble what ships from it (``assemble``),
save and log it (``export``) and evaluate it on the held-out test split (``held_out``)."""
