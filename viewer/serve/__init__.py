"""``tfevents serve``: TensorBoard's web UI on our reader, through its ``TensorBoardDataProvider`` gRPC API.

- ``provider.py``: the service (every RPC, as the Rust data server answers it) over a live logdir
  (``tfevents.summaries.live``);
- ``server.py``: the gRPC server, the reload thread, and TensorBoard's web server as a child process.
"""
