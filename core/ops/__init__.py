"""Op families; importing this package registers every op (forward, gradient, TF name)."""
import os as _os


def load_kernels():
    """The optional C extension ``tfevents.core._kernels`` (core/_kernels.c: fused optimizer updates, relu),
    or None when it is not built or ``TFEVENTS_CORE_KERNELS=0`` is set; every op using it has a numpy fallback
    giving the same numbers."""
    if _os.environ.get("TFEVENTS_CORE_KERNELS", "1") == "0":
        return None
    try:
        from .. import _kernels
    except ImportError:
        return None
    return _kernels


from . import math_ops, array_ops, nn_ops, state_ops, random_ops  # noqa: E402,F401
from . import (elementwise_ops, linalg_ops, segment_ops, manip_ops, conv_ops, pool_ops,  # noqa: E402,F401
               activation_ops)
