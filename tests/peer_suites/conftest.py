# The vendored peer suites run in their own pytest process (tests/summaries/test_peer_suites.py), not in ours.
collect_ignore = ["tensorboardX", "torch", "swap_writer.py"]
