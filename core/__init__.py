"""A TensorFlow-1 style graph, autodiff and optimizer engine on numpy."""
