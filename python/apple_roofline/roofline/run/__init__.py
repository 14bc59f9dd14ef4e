"""Measuring a device with the suites: the runner, the loop over a suite's cases, timing one case,
the time budget and its predictions, the probe, the quick plan, the run's options and the checks
made after the timed samples (docs/design/measurement.md, "Measurement")."""
