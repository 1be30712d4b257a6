"""The reports: a logdir as one self-contained HTML file. ``interactive/`` is the default (uPlot charts, data
embedded, run under a hash-based CSP); ``static.py`` is the script-free one of PNG charts (``--static``);
``safe_html.py`` renders and cleans text summaries for both; ``rerender_on_change.py`` re-renders a report
(or ``tfevents plot``'s image) whenever the logdir's event files change (``--watch``)."""
