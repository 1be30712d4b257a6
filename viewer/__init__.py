"""Plots and reports of runs; the tfevents command line."""
