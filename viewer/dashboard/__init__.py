"""tfevents' own dashboard and HTTP JSON API over a live logdir (``tfevents api``, and ``tfevents serve`` beside
TensorBoard's UI; issue 34).

The parts: ``page.py`` (the page at ``/``: the interactive report's page and scripts, its series asked for from the
API on demand by ``reports/interactive/served.js``), ``reduce.py`` (a series reduced to pixel columns, M4: pure
numpy), ``density.py`` (many runs of one chart as a density, DenseLines: pure numpy), ``app.py`` (the Starlette app:
the page and the ``/api/v1/`` routes, read only through ``LiveLogdir``'s read API, and their JSON),
``responses.py`` (their strict, escaped JSON), ``proxy.py`` (TensorBoard's UI at ``/tensorboard/``, forwarded to
its web server), ``access.py`` (loopback or not, a fresh token, the printed URL: stdlib only, for the CLI),
``auth.py`` (the token: query, header or cookie, compared in constant time), ``server.py`` (the reload thread and
uvicorn, TLS). Starlette and uvicorn are the ``dashboard`` extra, imported only by the modules that serve (never by
``access.py``), only when the command runs.
"""
