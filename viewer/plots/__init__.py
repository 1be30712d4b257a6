"""The plots: matplotlib Figures of runs as TensorBoard's dashboards draw them (scalars, histograms and
distributions, images and PR curves, embeddings and meshes, hparams, graphs); ``matplotlib_figures.py`` is
their matplotlib plumbing. The public functions are exported lazily by ``tfevents.viewer``."""
