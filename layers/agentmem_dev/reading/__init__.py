"""Development tooling for the statement reader: its labelled data and the script that trains
and measures the learned heads (:mod:`agentmem_dev.reading.train`)."""
