"""wgangp."""
