"""Timing: the measurement loop (:mod:`.measure`), the statistics of its samples (:mod:`.stats`), the
bounds of every device wait (:mod:`.watchdog`) and the clock each measurement ran at (:mod:`.clocks`)."""
