"""Linear algebra: eye, diag, matrix ops, cholesky, trace, norm (tensordot and einsum: linalg_contract_ops).

Matrix ops work on the last two dimensions and are batched over the leading ones, like TF's. Gradients follow
TF's ``linalg_grad.py`` / ``array_grad.py`` and are built from graph ops (second derivatives work). Batched
products use ``BatchMatMulV2`` (rank-2 operands keep ``MatMul``).

Names in ``__all__`` are exported as ``tf.<name>``."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..framework import dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor, name_scope
from ..framework.tensor_shape import TensorShape
from ..framework.registry import (REGISTRY, apply_op, broadcast_shapes, constant, constant_value, convert_to_tensor,
                                  register, shape_same)
from . import array_ops, broadcast_gradients, math_ops, reduction_ops

__all__ = ["eye", "diag", "diag_part", "matrix_transpose", "matrix_band_part", "matrix_inverse",
           "matrix_determinant", "cholesky", "trace", "norm", "matrix_diag",
           "matrix_diag_part", "matrix_set_diag"]


def _dims(t: Tensor) -> Optional[list]:
    return None if t.shape.dims is None else list(t.shape.dims)


# ---- batched matmul (internal: the gradients of batched matrix ops)


def _bmm_forward(x, y, adj_x=False, adj_y=False):
    return np.matmul(np.swapaxes(x, -1, -2) if adj_x else x, np.swapaxes(y, -1, -2) if adj_y else y)


def _bmm_shape(op):
    a, b = _dims(op.inputs[0]), _dims(op.inputs[1])
    if a is None or b is None:
        return TensorShape(None)
    m = a[-1] if op.attrs["adj_x"] else a[-2]
    n = b[-2] if op.attrs["adj_y"] else b[-1]
    batch = broadcast_shapes(TensorShape(a[:-2]), TensorShape(b[:-2])).dims
    return TensorShape(None if batch is None else list(batch) + [m, n])


def _bmm_grad(op, g):
    x, y = op.inputs
    ax, ay = op.attrs["adj_x"], op.attrs["adj_y"]
    if not ax and not ay:
        gx, gy = _matmul(g, y, adjoint_b=True), _matmul(x, g, adjoint_a=True)
    elif not ax and ay:
        gx, gy = _matmul(g, y), _matmul(g, x, adjoint_a=True)
    elif ax and not ay:
        gx, gy = _matmul(y, g, adjoint_b=True), _matmul(x, g)
    else:
        gx, gy = _matmul(y, g, adjoint_a=True, adjoint_b=True), _matmul(g, x, adjoint_a=True, adjoint_b=True)
    return [broadcast_gradients.unbroadcast(gx, x), broadcast_gradients.unbroadcast(gy, y)]


if "BatchMatMulV2" not in REGISTRY:        # math_ops may register TF's batched tf.matmul itself
    register("BatchMatMulV2", _bmm_forward, _bmm_grad, _bmm_shape)


def _matmul(a: Tensor, b: Tensor, adjoint_a: bool = False, adjoint_b: bool = False) -> Tensor:
    """``MatMul`` for matrices, ``BatchMatMulV2`` otherwise (as TF's ``tf.matmul``)."""
    if a.shape.ndims == 2 and b.shape.ndims == 2:
        return math_ops.matmul(a, b, transpose_a=adjoint_a, transpose_b=adjoint_b)
    return apply_op("BatchMatMulV2", [a, b], dict(adj_x=bool(adjoint_a), adj_y=bool(adjoint_b)))


# ---- Diag / DiagPart (rank 2k <-> rank k)


def _diag_forward(x):
    n = x.size
    out = np.zeros((n, n), dtype=x.dtype)
    out[np.arange(n), np.arange(n)] = x.reshape(-1)
    return out.reshape(x.shape + x.shape)


def _diag_part_forward(x):
    half = x.shape[:x.ndim // 2]
    n = int(np.prod(half))
    return x.reshape(n, n)[np.arange(n), np.arange(n)].reshape(half)


def _diag_part_shape(op):
    dims = _dims(op.inputs[0])
    if dims is None:
        return TensorShape(None)
    k = len(dims) // 2
    if len(dims) % 2 or len(dims) == 0:
        raise ValueError("Input must have even rank <= 6, input rank is %d for '%s' (op: 'DiagPart') with input "
                         "shapes: %s." % (len(dims), op.name, op.inputs[0].shape))
    return TensorShape(dims[:k]).merge_with(TensorShape(dims[k:]))


register("Diag", _diag_forward, lambda op, g: [diag_part(g)],
         lambda op: TensorShape(None) if _dims(op.inputs[0]) is None else TensorShape(_dims(op.inputs[0]) * 2))
register("DiagPart", _diag_part_forward, lambda op, g: [diag(g)], _diag_part_shape)


def diag(diagonal: Any, name: Optional[str] = None) -> Tensor:
    """A tensor of rank 2k with ``diagonal`` (rank k) on its diagonal: ``out[i1..ik, i1..ik] = diagonal[i1..ik]``."""
    return apply_op("Diag", [diagonal], name=name)


def diag_part(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002 - TF's argument name
    """The diagonal of a rank-2k tensor: ``out[i1..ik] = input[i1..ik, i1..ik]`` (inverse of ``diag``)."""
    return apply_op("DiagPart", [input], name=name)


# ---- batched main diagonal: MatrixDiagV3 / MatrixDiagPartV3 / MatrixSetDiagV3 (k = 0)


def _check_k(k):
    if isinstance(k, Tensor) or np.any(np.asarray(k) != 0):
        raise NotImplementedError("only the main diagonal (k=0) is supported")


def _matrix_diag_forward(d, k, num_rows, num_cols, padding, align="RIGHT_LEFT"):
    _check_k(k)
    n = d.shape[-1]
    rows = n if int(num_rows) < 0 else int(num_rows)
    cols = n if int(num_cols) < 0 else int(num_cols)
    out = np.full(d.shape[:-1] + (rows, cols), padding, dtype=d.dtype)
    m = min(rows, cols, n)
    out[..., np.arange(m), np.arange(m)] = d[..., :m]
    return out


def _matrix_diag_shape(op):
    dims = _dims(op.inputs[0])
    rows, cols = (constant_value(t) for t in op.inputs[2:4])
    if dims is None:
        return TensorShape(None)
    n = dims[-1]
    rows = None if rows is None else (n if int(rows) < 0 else int(rows))
    cols = None if cols is None else (n if int(cols) < 0 else int(cols))
    return TensorShape(dims[:-1] + [rows, cols])


def _matrix_diag_part_forward(x, k, padding, align="RIGHT_LEFT"):
    _check_k(k)
    return np.diagonal(x, axis1=-2, axis2=-1).copy()


def _matrix_diag_part_shape(op):
    dims = _dims(op.inputs[0])
    if dims is None:
        return TensorShape(None)
    m, n = dims[-2:]
    return TensorShape(dims[:-2] + [None if m is None or n is None else min(m, n)])


def _matrix_diag_part_grad(op, g):
    dims = _dims(op.inputs[0])
    if dims is not None and None not in dims[-2:]:
        return [matrix_diag(g, num_rows=dims[-2], num_cols=dims[-1]), None, None]
    return [matrix_set_diag(array_ops.zeros_like(op.inputs[0]), g), None, None]


def _matrix_set_diag_forward(x, d, k, align="RIGHT_LEFT"):
    _check_k(k)
    out = x.copy()
    m = min(x.shape[-2:])
    out[..., np.arange(m), np.arange(m)] = d
    return out


register("MatrixDiagV3", _matrix_diag_forward,
         lambda op, g: [matrix_diag_part(g), None, None, None, None], _matrix_diag_shape)
register("MatrixDiagPartV3", _matrix_diag_part_forward, _matrix_diag_part_grad, _matrix_diag_part_shape)
register("MatrixSetDiagV3", _matrix_set_diag_forward,
         lambda op, g: [matrix_set_diag(g, array_ops.zeros_like(op.inputs[1])), matrix_diag_part(g), None],
         shape_same)


def matrix_diag(diagonal: Any, name: str = "diag", k: int = 0, num_rows: int = -1, num_cols: int = -1,
                padding_value: Any = 0, align: str = "RIGHT_LEFT") -> Tensor:
    """Batched diagonal matrices: ``out[..., i, i] = diagonal[..., i]``, ``padding_value`` elsewhere (k=0)."""
    _check_k(k)
    with name_scope(name, "diag") as scope:
        diagonal = convert_to_tensor(diagonal, name="diagonal")
        i32 = dict(dtype=dtypes.int32)
        return apply_op("MatrixDiagV3", [diagonal, constant(k, name="k", **i32),
                                         constant(num_rows, name="num_rows", **i32),
                                         constant(num_cols, name="num_cols", **i32),
                                         constant(padding_value, dtype=diagonal.dtype, name="padding_value")],
                        dict(align=align), name=scope)


def matrix_diag_part(input: Any, name: str = "diag_part", k: int = 0, padding_value: Any = 0,  # noqa: A002
                     align: str = "RIGHT_LEFT") -> Tensor:
    """The main diagonals of a batch of matrices: ``out[..., i] = input[..., i, i]``."""
    _check_k(k)
    with name_scope(name, "diag_part") as scope:
        x = convert_to_tensor(input, name="input")
        return apply_op("MatrixDiagPartV3", [x, constant(k, dtype=dtypes.int32, name="k"),
                                             constant(padding_value, dtype=x.dtype, name="padding_value")],
                        dict(align=align), name=scope)


def matrix_set_diag(input: Any, diagonal: Any, name: str = "set_diag", k: int = 0,  # noqa: A002
                    align: str = "RIGHT_LEFT") -> Tensor:
    """``input`` with its main diagonals replaced by ``diagonal``."""
    _check_k(k)
    with name_scope(name, "set_diag") as scope:
        return apply_op("MatrixSetDiagV3", [input, diagonal, constant(k, dtype=dtypes.int32, name="k")],
                        dict(align=align), name=scope)


def eye(num_rows: Any, num_columns: Any = None, batch_shape: Any = None, dtype: Any = dtypes.float32,
        name: Optional[str] = None) -> Tensor:
    """Identity matrix (or a batch of them) of shape ``batch_shape + [num_rows, num_columns]``: ones on the
    diagonal by ``matrix_diag`` (square) or ``matrix_set_diag`` into zeros; sizes may be scalar tensors."""
    with name_scope(name, "eye"):
        dtype = dtypes.as_dtype(dtype)
        is_square = num_columns is None
        num_columns = num_rows if num_columns is None else num_columns
        batch_shape = [] if batch_shape is None else batch_shape
        if isinstance(num_rows, Tensor) or isinstance(num_columns, Tensor):
            diag_size = math_ops.minimum(num_rows, num_columns)
        else:
            if not isinstance(num_rows, (int, np.integer)) or not isinstance(num_columns, (int, np.integer)):
                raise TypeError("Arguments `num_rows` and `num_columns` must be positive integer values. "
                                "Received: num_rows=%s, num_columns=%s" % (num_rows, num_columns))
            is_square = num_rows == num_columns
            diag_size = min(num_rows, num_columns)
        if isinstance(batch_shape, Tensor) or isinstance(diag_size, Tensor):
            batch_shape = convert_to_tensor(batch_shape, dtype=dtypes.int32, name="shape")
            diag_shape = array_ops.concat([batch_shape, array_ops.stack([diag_size])], 0)
            if not is_square:
                shape = array_ops.concat([batch_shape, array_ops.stack([num_rows, num_columns])], 0)
        else:
            diag_shape = [int(d) for d in batch_shape] + [diag_size]
            shape = [int(d) for d in batch_shape] + [num_rows, num_columns]
        ones = array_ops.ones(diag_shape, dtype=dtype)
        if is_square:
            return matrix_diag(ones)
        return matrix_set_diag(array_ops.zeros(shape, dtype=dtype), ones)


def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> Tensor:
    """Transpose of the last two dimensions (``perm = [0, ..., n-1, n-3... , n-1, n-2]``)."""
    with name_scope(name, "matrix_transpose"):
        a = convert_to_tensor(a, name="a")
        n = a.shape.ndims
        if n is None:
            r = array_ops.rank(a)
            perm = array_ops.concat([array_ops.range_(0, r - 2, 1), array_ops.stack([r - 1, r - 2])], 0)
            return array_ops.transpose(a, perm)
        if n < 2:
            raise ValueError("Argument `a` should be a (batch) matrix with rank >= 2.  Received `a` = %s with "
                             "shape: %s" % (a, a.shape))
        return array_ops.transpose(a, list(range(n - 2)) + [n - 1, n - 2])


# ---- band part


def _band_forward(x, lower, upper):
    m, n = x.shape[-2:]
    d = np.arange(m)[:, None] - np.arange(n)[None, :]          # i - j
    keep = ((int(lower) < 0) | (d <= int(lower))) & ((int(upper) < 0) | (-d <= int(upper)))
    return np.where(keep, x, np.zeros((), x.dtype))


register("MatrixBandPart", _band_forward,
         lambda op, g: [matrix_band_part(g, op.inputs[1], op.inputs[2]), None, None], shape_same,
         type_attrs={"Tindex": 1})


def matrix_band_part(input: Any, num_lower: Any, num_upper: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Keeps ``input[..., i, j]`` where ``(num_lower < 0 or i - j <= num_lower) and (num_upper < 0 or
    j - i <= num_upper)``, zeros elsewhere."""
    with name_scope(name, "MatrixBandPart") as scope:
        lower = convert_to_tensor(num_lower, dtype=None if isinstance(num_lower, Tensor) else dtypes.int32,
                                  name="num_lower")
        upper = convert_to_tensor(num_upper, dtype=None if isinstance(num_upper, Tensor) else lower.dtype,
                                  name="num_upper")
        return apply_op("MatrixBandPart", [input, lower, upper], name=scope)


# ---- inverse, determinant, cholesky, svd


def _square_shape(op_type):
    def shape(op):
        dims = _dims(op.inputs[0])
        if dims is None:
            return TensorShape(None)
        if len(dims) < 2:
            raise ValueError("Shape must be at least rank 2 but is rank %d for '%s' (op: '%s') with input "
                             "shapes: %s." % (len(dims), op.name, op_type, op.inputs[0].shape))
        m, n = dims[-2:]
        if m is not None and n is not None and m != n:
            raise ValueError("Dimensions must be equal, but are %d and %d for '%s' (op: '%s') with input "
                             "shapes: %s." % (m, n, op.name, op_type, op.inputs[0].shape))
        return TensorShape(dims) if op_type != "MatrixDeterminant" else TensorShape(dims[:-2])
    return shape


def _inverse_forward(x, adjoint=False):
    try:
        return np.linalg.inv(np.swapaxes(x, -1, -2) if adjoint else x).astype(x.dtype, copy=False)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError(None, "Input is not invertible.") from None


def _inverse_grad(op, g):
    """TF: ``-ainv^H g ainv^H`` (adjoint=False)."""
    ainv, adj = op.outputs[0], op.attrs["adjoint"]
    return [-_matmul(ainv, _matmul(g, ainv, adjoint_a=adj, adjoint_b=not adj), adjoint_a=not adj)]


def _determinant_grad(op, g):
    """TF: ``(g * det)[..., None, None] * inverse(a)^H``."""
    a, det = op.inputs[0], op.outputs[0]
    multipliers = array_ops.expand_dims(array_ops.expand_dims(g * det, -1), -1)
    return [multipliers * matrix_inverse(a, adjoint=True)]


def _cholesky_forward(x):
    try:
        return np.linalg.cholesky(x).astype(x.dtype, copy=False)
    except np.linalg.LinAlgError:
        raise InvalidArgumentError(None, "Cholesky decomposition was not successful. The input might not be "
                                         "valid.") from None


def _cholesky_grad(op, g):
    """TF: ``phi(L^H g) ``: ``L^-H (tril(L^H g) with halved diagonal) L^-1``, symmetrized and halved."""
    chol = op.outputs[0]
    l_inv = matrix_inverse(chol)
    middle = _matmul(chol, g, adjoint_a=True)
    middle = matrix_set_diag(middle, 0.5 * matrix_diag_part(middle))
    middle = matrix_band_part(middle, -1, 0)
    grad_a = _matmul(_matmul(l_inv, middle, adjoint_a=True), l_inv)
    grad_a = grad_a + matrix_transpose(grad_a)
    return [grad_a * 0.5]


register("MatrixInverse", _inverse_forward, _inverse_grad, _square_shape("MatrixInverse"))
register("MatrixDeterminant", lambda x: np.asarray(np.linalg.det(x), dtype=x.dtype), _determinant_grad,
         _square_shape("MatrixDeterminant"))
register("Cholesky", _cholesky_forward, _cholesky_grad, _square_shape("Cholesky"))


def _svd_forward(x, compute_uv=True, full_matrices=False):
    if not compute_uv:
        s = np.linalg.svd(x, compute_uv=False)
        empty = np.zeros((0,), x.dtype)
        return s.astype(x.dtype, copy=False), empty, empty
    u, s, vh = np.linalg.svd(x, full_matrices=full_matrices)
    return s.astype(x.dtype), u.astype(x.dtype), np.swapaxes(vh, -1, -2).astype(x.dtype)


def _svd_shape(op):
    dims = _dims(op.inputs[0])
    if dims is None:
        return [TensorShape(None)] * 3
    m, n = dims[-2:]
    p = None if m is None or n is None else min(m, n)
    if not op.attrs["compute_uv"]:
        return [TensorShape(dims[:-2] + [p]), TensorShape([0]), TensorShape([0])]
    full = op.attrs["full_matrices"]
    return [TensorShape(dims[:-2] + [p]), TensorShape(dims[:-2] + [m, m if full else p]),
            TensorShape(dims[:-2] + [n, n if full else p])]


def _svd_grad(op, grad_s, grad_u, grad_v):
    """Only the singular values' gradient (``compute_uv=False``, as tf.norm(ord=2) uses): ``U diag(gs) V^H``."""
    if op.attrs["compute_uv"]:
        raise NotImplementedError("the gradient of Svd with compute_uv=True is not implemented")
    _, u, v = apply_op("Svd", [op.inputs[0]], dict(compute_uv=True, full_matrices=False))
    return [_matmul(u, _matmul(matrix_diag(grad_s), v, adjoint_b=True))]


register("Svd", _svd_forward, _svd_grad, _svd_shape, num_outputs=3)


def matrix_inverse(input: Any, adjoint: bool = False, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The inverse of each square matrix (of its adjoint if ``adjoint``); a singular matrix is an error."""
    return apply_op("MatrixInverse", [input], dict(adjoint=bool(adjoint)), name=name)


def matrix_determinant(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """The determinant of each square matrix; gradient ``g * det(a) * inverse(a)^T``."""
    return apply_op("MatrixDeterminant", [input], name=name)


def cholesky(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """Lower-triangular ``L`` with ``L L^T = input`` (reads the lower triangle); not positive definite: error."""
    return apply_op("Cholesky", [input], name=name)


def trace(x: Any, name: Optional[str] = None) -> Tensor:
    """``reduce_sum(matrix_diag_part(x), [-1])``: the sum of each matrix's main diagonal."""
    with name_scope(name, "Trace") as scope:
        x = convert_to_tensor(x, name="x")
        return reduction_ops.reduce_sum(matrix_diag_part(x), [-1], name=scope)


# ---- norm


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: Optional[bool] = None,  # noqa: A002
         name: Optional[str] = None, keep_dims: Optional[bool] = None) -> Tensor:
    """Vector norms (``axis`` None or an int: ``ord`` 'euclidean', 1, 2, np.inf or any p > 0) and matrix norms
    (``axis`` a pair: 'euclidean'/'fro', 1 (max column sum), 2 (largest singular value), np.inf (max row sum)),
    reduced dims kept with ``keepdims``; TF1's composite of Abs/Pow/Sum/Max/Sqrt/Squeeze."""
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    is_matrix = isinstance(axis, (tuple, list)) and len(axis) == 2
    if is_matrix:
        axis = tuple(axis)
        if not all(isinstance(a, (int, np.integer)) for a in axis) or axis[0] == axis[1]:
            raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique integers, got %s" % (axis,))
        if ord not in ("euclidean", "fro", 1, 2, np.inf):
            raise ValueError("'ord' must be a supported matrix norm in ['euclidean', 'fro', 1, 2, inf], got %s"
                             % (ord,))
    else:
        if not (axis is None or isinstance(axis, (int, np.integer))):
            raise ValueError("'axis' must be None, an integer, or a tuple of 2 unique integers, got %s" % (axis,))
        if ord not in ("euclidean", 1, 2, np.inf) and (isinstance(ord, str) or not np.isreal(ord) or ord <= 0):
            raise ValueError("'ord' must be a supported vector norm, got %s" % (ord,))
        axis = None if axis is None else (int(axis),)
    with name_scope(name, "norm"):
        x = convert_to_tensor(tensor)
        if ord in ("fro", "euclidean", 2, 2.0) and not (is_matrix and ord == 2):
            result = math_ops.sqrt(reduction_ops.reduce_sum(x * x, axis, keepdims=True))
        elif ord in (2, 2.0):
            result = _spectral_norm(x, axis)
        else:
            result = math_ops.abs(x)
            if ord == 1:
                result = reduction_ops.reduce_sum(result, None if axis is None else axis[0], keepdims=True)
                if is_matrix:
                    result = reduction_ops.reduce_max(result, axis[-1], keepdims=True)
            elif ord == np.inf:
                if is_matrix:
                    result = reduction_ops.reduce_sum(result, axis[1], keepdims=True)
                result = reduction_ops.reduce_max(result, None if axis is None else axis[0], keepdims=True)
            else:
                result = math_ops.pow(reduction_ops.reduce_sum(math_ops.pow(result, float(ord)), axis, keepdims=True),
                                      1.0 / ord)
        if not keepdims:
            result = array_ops.squeeze(result, list(axis) if axis is not None else None)
        return result


def _spectral_norm(x: Tensor, axis: tuple) -> Tensor:
    """The largest singular value over ``axis`` (kept as size-1 dims): the two axes moved last, ``Svd``
    (singular values only), ``Max``, moved back. TF builds the permutations with map_fn; here they are static."""
    n = x.shape.ndims
    if n is None:
        raise NotImplementedError("norm(ord=2) over a matrix axis needs a known rank")
    pos = [a % n for a in axis]
    before = [i for i in range(n) if i not in pos] + pos
    after = [int(np.flatnonzero(np.array(before) == i)[0]) for i in range(n)]
    s = apply_op("Svd", [array_ops.transpose(x, before)], dict(compute_uv=False, full_matrices=False))[0]
    top = array_ops.expand_dims(reduction_ops.reduce_max(math_ops.abs(s), -1, keepdims=True), -1)
    return array_ops.transpose(top, after)

