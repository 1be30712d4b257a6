"""``tf.layers`` (TF 1.x layers, as ``tf.compat.v1.layers``): layer classes and their functional forms.

``base`` holds ``Layer`` and the variable naming and reuse rules; ``core_layers`` Dense, Dropout, Flatten;
``convolutional`` the convolutions; ``pooling`` the poolings; ``normalization`` batch normalization.
"""
from .base import *  # noqa: F401,F403 - each module's __all__ is its tf.layers.<name> API
from .convolutional import *  # noqa: F401,F403
from .core_layers import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from . import base, convolutional, core_layers, normalization, pooling

__all__ = base.__all__ + core_layers.__all__ + convolutional.__all__ + pooling.__all__ + normalization.__all__
