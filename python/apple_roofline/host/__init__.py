"""The host: the CPUs this process may use (:mod:`.cpus`) and the provenance every results file records
(:mod:`.provenance`)."""
