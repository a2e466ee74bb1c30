"""The shipped model: the synthesizer (generator, transform, calibration, copula mixture), its
saved bundle and where to find it, and the MLflow pyfunc model ``synthesizer`` that serves it."""
