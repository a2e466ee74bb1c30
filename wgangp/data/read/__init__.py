"""From data.path to rows: files, folders, globs and URLs, read in bounded memory (one cap rule)."""
