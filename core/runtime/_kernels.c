/* Fused optimizer updates for tfevents.core (TF's training_ops), one pass over the arrays in place, and the
 * relu forward/gradient in one pass (numpy needs a comparison temporary and a mixed-type loop for those).
 *
 *   apply_gradient_descent(var, alpha, delta) -> bool
 *   apply_momentum(var, accum, lr, grad, momentum, use_nesterov) -> bool
 *   apply_adagrad(var, accum, lr, grad, update_slots) -> bool
 *   apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad, use_nesterov) -> bool
 *   apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad) -> bool
 *   relu(x, out) -> bool                      out = max(x, 0) (out may be x)
 *   relu_grad(g, features, out) -> bool       out = g * (features > 0) (out may be g)
 *   im2col(x, cols, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow) -> bool    convolution patches of NHWC x
 *   col2im(cols, out, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow) -> bool  their adjoint (input gradient)
 *   max_pool_grad(x, dy, out, kh, kw, sh, sw, pt, pl, oh, ow) -> bool dy routed to each window's first max
 *   flush_denormals() -> bits; restore_denormals(bits)   the calling thread's FTZ/DAZ mode, which TF sets
 *                                             for its kernels and core's Session.run sets around a step
 *
 * Each returns False without touching anything when it cannot take the call (the caller then runs the numpy
 * version in core/train/ops.py): arrays that are not C-contiguous, aligned float32/float64 buffers of one
 * dtype and one shape, variables/slots that are not writeable, a gradient that overlaps a variable or slot,
 * or a scalar that is not a Python float or a one-element buffer of the variable's dtype.
 *
 * The arithmetic is the numpy version's, operation by operation in the variable's dtype (each product, sum,
 * quotient and sqrt rounded to float32 for float32 variables; compiled with -ffp-contract=off so that no FMA
 * fuses two roundings), so both paths give bitwise the same numbers; tests/test_core_kernels.py checks that.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define MAX_ARRAYS 4
#define GIL_FREE_ABOVE 32768 /* elements: release the GIL for big updates (other session threads may run) */

typedef struct {
    Py_buffer views[MAX_ARRAYS];
    int n_views;
    char kind; /* 'f' or 'd' */
    Py_ssize_t n;
} Arrays;

static void release(Arrays *a) {
    for (int i = 0; i < a->n_views; i++) PyBuffer_Release(&a->views[i]);
    a->n_views = 0;
}

static char kind_of(const char *format) {
    if (format == NULL) return 0;
    if (format[0] == '<' || format[0] == '=' || format[0] == '@') format++;
    if ((format[0] == 'f' || format[0] == 'd') && format[1] == '\0') return format[0];
    return 0;
}

/* Get a C-contiguous view of obj; 1 on success, 0 when unsupported (no Python error left set). */
static int get_view(Arrays *a, PyObject *obj, int writable) {
    Py_buffer *view = &a->views[a->n_views];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (!PyObject_CheckBuffer(obj) || PyObject_GetBuffer(obj, view, flags) != 0) {
        PyErr_Clear();
        return 0;
    }
    a->n_views++;
    char kind = kind_of(view->format);
    if (kind == 0 || view->itemsize != (kind == 'f' ? 4 : 8) || ((uintptr_t)view->buf % view->itemsize) != 0)
        return 0;
    if (a->n_views == 1) {
        a->kind = kind;
        a->n = view->len / view->itemsize;
        return 1;
    }
    Py_buffer *first = &a->views[0];
    if (kind != a->kind || view->ndim != first->ndim) return 0;
    for (int d = 0; d < view->ndim; d++)
        if (view->shape[d] != first->shape[d]) return 0;
    return 1;
}

static int overlaps(const Py_buffer *x, const Py_buffer *y) {
    const char *a = (const char *)x->buf, *b = (const char *)y->buf;
    return x->len > 0 && y->len > 0 && a < b + y->len && b < a + x->len;
}

/* refs: the variable and its slots (writeable); grad: read only. 1 when all are usable. */
static int get_arrays(Arrays *a, PyObject **refs, int n_refs, PyObject *grad) {
    a->n_views = 0;
    for (int i = 0; i < n_refs; i++)
        if (!get_view(a, refs[i], 1)) return 0;
    if (!get_view(a, grad, 0)) return 0;
    for (int i = 0; i < a->n_views; i++)
        for (int j = i + 1; j < a->n_views; j++)
            if (overlaps(&a->views[i], &a->views[j])) return 0;
    return 1;
}

/* A scalar input as the variable's dtype: a Python float (numpy casts it to the array's dtype), or a
 * one-element buffer of exactly that dtype. 1 on success. */
static int get_scalar(PyObject *obj, char kind, double *out) {
    if (PyFloat_CheckExact(obj)) {
        double d = PyFloat_AS_DOUBLE(obj);
        *out = kind == 'f' ? (double)(float)d : d;
        return 1;
    }
    Py_buffer view;
    if (!PyObject_CheckBuffer(obj) || PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
        PyErr_Clear();
        return 0;
    }
    int ok = kind_of(view.format) == kind && view.len == view.itemsize &&
             view.itemsize == (kind == 'f' ? 4 : 8);
    if (ok) {
        if (kind == 'f') {
            float f;
            memcpy(&f, view.buf, 4);
            *out = f;
        } else {
            memcpy(out, view.buf, 8);
        }
    }
    PyBuffer_Release(&view);
    return ok;
}

static int get_scalars(PyObject **objs, int n, char kind, double *out) {
    for (int i = 0; i < n; i++)
        if (!get_scalar(objs[i], kind, &out[i])) return 0;
    return 1;
}

#define F(i) ((float *)a.views[i].buf)
#define D(i) ((double *)a.views[i].buf)
#define RUN(body)                                   \
    do {                                            \
        if (a.n > GIL_FREE_ABOVE) {                 \
            Py_BEGIN_ALLOW_THREADS body Py_END_ALLOW_THREADS \
        } else {                                    \
            body                                    \
        }                                           \
    } while (0)

/* The loops, written once for both dtypes. T is float or double, S its sqrt. */

#define GD_LOOP(T, var, delta, alpha_)                          \
    {                                                           \
        const T k_alpha = (T)(alpha_);                          \
        for (Py_ssize_t i = 0; i < n; i++) var[i] = var[i] - k_alpha * delta[i]; \
    }

#define MOMENTUM_LOOP(T, var, accum, grad, lr_, mom_, nesterov)                         \
    {                                                                                   \
        const T k_lr = (T)(lr_), k_mom = (T)(mom_);                                         \
        if (nesterov) {                                                                 \
            for (Py_ssize_t i = 0; i < n; i++) {                                        \
                T g = grad[i], acc = accum[i] * k_mom + g;                                \
                accum[i] = acc;                                                         \
                var[i] = var[i] - (g * k_lr + acc * k_mom * k_lr);                            \
            }                                                                           \
        } else {                                                                        \
            for (Py_ssize_t i = 0; i < n; i++) {                                        \
                T acc = accum[i] * k_mom + grad[i];                                       \
                accum[i] = acc;                                                         \
                var[i] = var[i] - acc * k_lr;                                             \
            }                                                                           \
        }                                                                               \
    }

#define ADAGRAD_LOOP(T, S, var, accum, grad, lr_, update)                               \
    {                                                                                   \
        const T k_lr = (T)(lr_);                                                        \
        for (Py_ssize_t i = 0; i < n; i++) {                                            \
            T g = grad[i], acc = accum[i];                                              \
            if (update) acc = acc + g * g;                                              \
            accum[i] = acc;                                                             \
            var[i] = var[i] - g * k_lr / S(acc);                                        \
        }                                                                               \
    }

#define ADAM_LOOP(T, S, var, m, v, grad, s, nesterov)                                   \
    {                                                                                   \
        /* s: beta1_power, beta2_power, lr, beta1, beta2, epsilon */                    \
        const T b1p = (T)s[0], b2p = (T)s[1], lr = (T)s[2], b1 = (T)s[3], b2 = (T)s[4], eps = (T)s[5]; \
        const T one = (T)1;                                                             \
        const T alpha = lr * S(one - b2p) / (one - b1p);                                \
        const T c1 = one - b1, c2 = one - b2;                                           \
        for (Py_ssize_t i = 0; i < n; i++) {                                            \
            T g = grad[i];                                                              \
            T mi = m[i] + (g - m[i]) * c1;                                              \
            T vi = v[i] + (g * g - v[i]) * c2;                                          \
            m[i] = mi;                                                                  \
            v[i] = vi;                                                                  \
            T step = nesterov ? g * c1 + b1 * mi : mi;                                  \
            var[i] = var[i] - step * alpha / (S(vi) + eps);                             \
        }                                                                               \
    }

#define RMSPROP_LOOP(T, S, var, ms, mom, grad, s)                                       \
    {                                                                                   \
        /* s: lr, rho, momentum, epsilon */                                             \
        const T lr = (T)s[0], rho = (T)s[1], momentum = (T)s[2], eps = (T)s[3];         \
        const T c = (T)1 - rho;                                                         \
        for (Py_ssize_t i = 0; i < n; i++) {                                            \
            T g = grad[i];                                                              \
            T msi = ms[i] + (g * g - ms[i]) * c;                                        \
            T mi = mom[i] * momentum + g * lr / S(msi + eps);                           \
            ms[i] = msi;                                                                \
            mom[i] = mi;                                                                \
            var[i] = var[i] - mi;                                                       \
        }                                                                               \
    }

static PyObject *result(Arrays *a, int ok) {
    release(a);
    if (PyErr_Occurred()) return NULL;
    return PyBool_FromLong(ok);
}

static PyObject *apply_gradient_descent(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "apply_gradient_descent(var, alpha, delta)");
        return NULL;
    }
    Arrays a;
    double alpha;
    if (!get_arrays(&a, (PyObject **)args, 1, args[2]) || !get_scalar(args[1], a.kind, &alpha))
        return result(&a, 0);
    Py_ssize_t n = a.n;
    if (a.kind == 'f') {
        float *var = F(0), *delta = F(1);
        RUN(GD_LOOP(float, var, delta, alpha));
    } else {
        double *var = D(0), *delta = D(1);
        RUN(GD_LOOP(double, var, delta, alpha));
    }
    return result(&a, 1);
}

static PyObject *apply_momentum(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "apply_momentum(var, accum, lr, grad, momentum, use_nesterov)");
        return NULL;
    }
    Arrays a;
    double lr, mom;
    if (!get_arrays(&a, (PyObject **)args, 2, args[3]) || !get_scalar(args[2], a.kind, &lr) ||
        !get_scalar(args[4], a.kind, &mom))
        return result(&a, 0);
    int nesterov = PyObject_IsTrue(args[5]);
    if (nesterov < 0) return result(&a, 0);
    Py_ssize_t n = a.n;
    if (a.kind == 'f') {
        float *var = F(0), *accum = F(1), *grad = F(2);
        RUN(MOMENTUM_LOOP(float, var, accum, grad, lr, mom, nesterov));
    } else {
        double *var = D(0), *accum = D(1), *grad = D(2);
        RUN(MOMENTUM_LOOP(double, var, accum, grad, lr, mom, nesterov));
    }
    return result(&a, 1);
}

static PyObject *apply_adagrad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "apply_adagrad(var, accum, lr, grad, update_slots)");
        return NULL;
    }
    Arrays a;
    double lr;
    if (!get_arrays(&a, (PyObject **)args, 2, args[3]) || !get_scalar(args[2], a.kind, &lr))
        return result(&a, 0);
    int update = PyObject_IsTrue(args[4]);
    if (update < 0) return result(&a, 0);
    Py_ssize_t n = a.n;
    if (a.kind == 'f') {
        float *var = F(0), *accum = F(1), *grad = F(2);
        RUN(ADAGRAD_LOOP(float, sqrtf, var, accum, grad, lr, update));
    } else {
        double *var = D(0), *accum = D(1), *grad = D(2);
        RUN(ADAGRAD_LOOP(double, sqrt, var, accum, grad, lr, update));
    }
    return result(&a, 1);
}

static PyObject *apply_adam(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, "
                                         "epsilon, grad, use_nesterov)");
        return NULL;
    }
    Arrays a;
    double s[6];
    if (!get_arrays(&a, (PyObject **)args, 3, args[9]) || !get_scalars((PyObject **)args + 3, 6, a.kind, s))
        return result(&a, 0);
    int nesterov = PyObject_IsTrue(args[10]);
    if (nesterov < 0) return result(&a, 0);
    Py_ssize_t n = a.n;
    if (a.kind == 'f') {
        float *var = F(0), *m = F(1), *v = F(2), *grad = F(3);
        RUN(ADAM_LOOP(float, sqrtf, var, m, v, grad, s, nesterov));
    } else {
        double *var = D(0), *m = D(1), *v = D(2), *grad = D(3);
        RUN(ADAM_LOOP(double, sqrt, var, m, v, grad, s, nesterov));
    }
    return result(&a, 1);
}

static PyObject *apply_rms_prop(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "apply_rms_prop(var, ms, mom, lr, rho, momentum, epsilon, grad)");
        return NULL;
    }
    Arrays a;
    double s[4];
    if (!get_arrays(&a, (PyObject **)args, 3, args[7]) || !get_scalars((PyObject **)args + 3, 4, a.kind, s))
        return result(&a, 0);
    Py_ssize_t n = a.n;
    if (a.kind == 'f') {
        float *var = F(0), *ms = F(1), *mom = F(2), *grad = F(3);
        RUN(RMSPROP_LOOP(float, sqrtf, var, ms, mom, grad, s));
    } else {
        double *var = D(0), *ms = D(1), *mom = D(2), *grad = D(3);
        RUN(RMSPROP_LOOP(double, sqrt, var, ms, mom, grad, s));
    }
    return result(&a, 1);
}

/* ---- activations: out may be one of the inputs (in place), never a partial overlap */

static int get_elementwise(Arrays *a, PyObject **inputs, int n_inputs, PyObject *out) {
    a->n_views = 0;
    for (int i = 0; i < n_inputs; i++)
        if (!get_view(a, inputs[i], 0)) return 0;
    if (!get_view(a, out, 1)) return 0;
    Py_buffer *o = &a->views[n_inputs];
    for (int i = 0; i < n_inputs; i++)
        if (overlaps(&a->views[i], o) && a->views[i].buf != o->buf) return 0;
    return 1;
}

/* relu(x, out): out = x < 0 ? 0 : x  (np.maximum(x, 0): NaN and -0.0 pass through) */
static PyObject *relu(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "relu(x, out)");
        return NULL;
    }
    Arrays a;
    if (!get_elementwise(&a, (PyObject **)args, 1, args[1])) return result(&a, 0);
    Py_ssize_t n = a.n;
    if (a.kind == 'f') {
        const float *x = F(0);
        float *out = F(1);
        RUN(for (Py_ssize_t i = 0; i < n; i++) out[i] = x[i] < 0.0f ? 0.0f : x[i];);
    } else {
        const double *x = D(0);
        double *out = D(1);
        RUN(for (Py_ssize_t i = 0; i < n; i++) out[i] = x[i] < 0.0 ? 0.0 : x[i];);
    }
    return result(&a, 1);
}

/* Two-input elementwise kernels, name(x0, x1, out): out[i] = EXPR(x0[i], x1[i]) in float or double, with
   numpy's evaluation order so that they give the numpy forwards' numbers bit for bit. */
#define BINARY_KERNEL(name, usage, EXPR)                                                   \
    static PyObject *name(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {       \
        if (nargs != 3) {                                                                  \
            PyErr_SetString(PyExc_TypeError, usage);                                       \
            return NULL;                                                                   \
        }                                                                                  \
        Arrays a;                                                                          \
        if (!get_elementwise(&a, (PyObject **)args, 2, args[2])) return result(&a, 0);    \
        Py_ssize_t n = a.n;                                                                \
        if (a.kind == 'f') {                                                               \
            const float *x0 = F(0), *x1 = F(1);                                            \
            float *out = F(2);                                                             \
            RUN(for (Py_ssize_t i = 0; i < n; i++) out[i] = EXPR(float, x0[i], x1[i]););   \
        } else {                                                                           \
            const double *x0 = D(0), *x1 = D(1);                                           \
            double *out = D(2);                                                            \
            RUN(for (Py_ssize_t i = 0; i < n; i++) out[i] = EXPR(double, x0[i], x1[i]););  \
        }                                                                                  \
        return result(&a, 1);                                                              \
    }

/* relu_grad(g, features, out): out = g * (features > 0)  (a product, as numpy's: inf * 0 is NaN) */
#define RELU_GRAD(T, g, f) ((g) * (T)((f) > (T)0))
BINARY_KERNEL(relu_grad, "relu_grad(g, features, out)", RELU_GRAD)

/* sigmoid_grad(y, g, out): out = g * y * (1 - y) */
#define SIGMOID_GRAD(T, y, g) ((g) * (y) * ((T)1 - (y)))
BINARY_KERNEL(sigmoid_grad, "sigmoid_grad(y, g, out)", SIGMOID_GRAD)

/* tanh_grad(y, g, out): out = g * (1 - y * y) */
#define TANH_GRAD(T, y, g) ((g) * ((T)1 - (y) * (y)))
BINARY_KERNEL(tanh_grad, "tanh_grad(y, g, out)", TANH_GRAD)


/* ---- convolution and pooling helpers (core/ops/conv_ops.py, pool_ops.py); NHWC, C-contiguous, one dtype.
 * Geometry g: kh, kw, sh, sw, dh, dw, pt, pl, oh, ow (kernel, strides, dilations, top/left padding, output). */

typedef struct {
    Py_ssize_t kh, kw, sh, sw, dh, dw, pt, pl, oh, ow;
} Geom;

static int get_geom(PyObject *const *args, int n, Geom *g) {
    Py_ssize_t v[10];
    for (int i = 0; i < n; i++) {
        v[i] = PyLong_AsSsize_t(args[i]);
        if (v[i] == -1 && PyErr_Occurred()) return 0;
    }
    g->kh = v[0], g->kw = v[1], g->sh = v[2], g->sw = v[3];
    if (n == 10) {
        g->dh = v[4], g->dw = v[5], g->pt = v[6], g->pl = v[7], g->oh = v[8], g->ow = v[9];
    } else { /* pooling: no dilation */
        g->dh = 1, g->dw = 1, g->pt = v[4], g->pl = v[5], g->oh = v[6], g->ow = v[7];
    }
    return g->kh > 0 && g->kw > 0 && g->sh > 0 && g->sw > 0 && g->dh > 0 && g->dw > 0 && g->pt >= 0 &&
           g->pl >= 0 && g->oh >= 0 && g->ow >= 0;
}

/* views must be C-contiguous of one float dtype with the given shapes (ndim entries each) */
static int get_shaped(Arrays *a, PyObject *obj, int writable, int ndim, const Py_ssize_t *shape) {
    Py_buffer *view = &a->views[a->n_views];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_ND | (writable ? PyBUF_WRITABLE : 0);
    if (!PyObject_CheckBuffer(obj) || PyObject_GetBuffer(obj, view, flags) != 0) {
        PyErr_Clear();
        return 0;
    }
    a->n_views++;
    char kind = kind_of(view->format);
    if (kind == 0 || view->itemsize != (kind == 'f' ? 4 : 8) || ((uintptr_t)view->buf % view->itemsize) != 0)
        return 0;
    if (a->n_views == 1) a->kind = kind;
    else if (kind != a->kind) return 0;
    if (view->ndim != ndim) return 0;
    for (int d = 0; d < ndim; d++)
        if (view->shape[d] != shape[d]) return 0;
    return 1;
}

static int no_overlaps(Arrays *a) {
    for (int i = 0; i < a->n_views; i++)
        for (int j = i + 1; j < a->n_views; j++)
            if (overlaps(&a->views[i], &a->views[j])) return 0;
    return 1;
}

/* one (n, y, z, i) row of kw patch entries: x's valid columns [j0, j1) are one contiguous span when dw == 1 */
#define IM2COL_LOOP(T)                                                                              \
    {                                                                                               \
        const T *x = (const T *)a.views[0].buf;                                                     \
        T *cols = (T *)a.views[1].buf;                                                              \
        const Py_ssize_t row = g.kw * c;                                                            \
        for (Py_ssize_t b = 0; b < n; b++)                                                          \
            for (Py_ssize_t y = 0; y < g.oh; y++)                                                   \
                for (Py_ssize_t z = 0; z < g.ow; z++) {                                             \
                    Py_ssize_t q0 = z * g.sw - g.pl, j0 = 0, j1 = g.kw;                             \
                    while (j0 < g.kw && q0 + j0 * g.dw < 0) j0++;                                   \
                    while (j1 > j0 && q0 + (j1 - 1) * g.dw >= w) j1--;                              \
                    for (Py_ssize_t i = 0; i < g.kh; i++, cols += row) {                            \
                        Py_ssize_t r = y * g.sh - g.pt + i * g.dh;                                  \
                        if (r < 0 || r >= h || j0 >= j1) {                                          \
                            memset(cols, 0, row * sizeof(T));                                       \
                            continue;                                                               \
                        }                                                                           \
                        if (j0 > 0) memset(cols, 0, j0 * c * sizeof(T));                            \
                        if (j1 < g.kw) memset(cols + j1 * c, 0, (g.kw - j1) * c * sizeof(T));       \
                        const T *src = x + ((b * h + r) * w + q0 + j0 * g.dw) * c;                  \
                        if (g.dw == 1) {                                                            \
                            memcpy(cols + j0 * c, src, (j1 - j0) * c * sizeof(T));                  \
                        } else {                                                                    \
                            for (Py_ssize_t j = j0; j < j1; j++, src += g.dw * c)                   \
                                for (Py_ssize_t k = 0; k < c; k++) cols[j * c + k] = src[k];        \
                        }                                                                           \
                    }                                                                               \
                }                                                                                   \
    }

/* The arguments of im2col and col2im: the image [N, H, W, C] at args[image], the columns [N, OH, OW, KH, KW, C] at
 * the other of args[0], args[1], the geometry after them; fills dims with the image's shape. 0 when they do not fit
 * (the caller answers False and the numpy path runs). */
static int get_conv_args(Arrays *a, Geom *g, PyObject *const *args, int image, Py_ssize_t dims[4]) {
    if (!get_geom(args + 2, 10, g)) return 0;
    Py_buffer probe;
    if (!PyObject_CheckBuffer(args[image]) || PyObject_GetBuffer(args[image], &probe, PyBUF_ND) != 0) {
        PyErr_Clear();
        return 0;
    }
    int ok = probe.ndim == 4;
    if (ok) memcpy(dims, probe.shape, 4 * sizeof(Py_ssize_t));
    PyBuffer_Release(&probe);
    if (!ok) return 0;
    Py_ssize_t cs[6] = {dims[0], g->oh, g->ow, g->kh, g->kw, dims[3]};
    if (image == 0)
        return get_shaped(a, args[0], 0, 4, dims) && get_shaped(a, args[1], 1, 6, cs) && no_overlaps(a);
    return get_shaped(a, args[0], 0, 6, cs) && get_shaped(a, args[1], 1, 4, dims) && no_overlaps(a);
}

/* im2col(x, cols, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow): cols[n, y, z, i, j, :] = x_padded[n, y*sh + i*dh,
 * z*sw + j*dw, :] (zero in the padding); x [N, H, W, C], cols [N, OH, OW, KH, KW, C] */
static PyObject *im2col(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 12) {
        PyErr_SetString(PyExc_TypeError, "im2col(x, cols, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow)");
        return NULL;
    }
    Arrays a = {.n_views = 0};
    Geom g;
    Py_ssize_t xs[4];
    if (!get_conv_args(&a, &g, args, 0, xs)) return result(&a, 0);
    Py_ssize_t n = xs[0], h = xs[1], w = xs[2], c = xs[3];
    Py_BEGIN_ALLOW_THREADS
    if (a.kind == 'f') IM2COL_LOOP(float) else IM2COL_LOOP(double)
    Py_END_ALLOW_THREADS
    return result(&a, 1);
}

/* col2im: out = 0, then every patch entry added to the input pixel it was read from, the patches in order
 * (n, y, z, i, j): for one pixel that is kernel offsets (i, j) in decreasing order, which is the numpy
 * fallback's order (it adds one offset at a time, last offset first), so both give the same sums. */
#define COL2IM_LOOP(T)                                                                              \
    {                                                                                               \
        const T *cols = (const T *)a.views[0].buf;                                                  \
        T *out = (T *)a.views[1].buf;                                                               \
        memset(out, 0, n * h * w * c * sizeof(T));                                                  \
        for (Py_ssize_t b = 0; b < n; b++)                                                          \
            for (Py_ssize_t y = 0; y < g.oh; y++)                                                   \
                for (Py_ssize_t z = 0; z < g.ow; z++)                                               \
                    for (Py_ssize_t i = 0; i < g.kh; i++) {                                         \
                        Py_ssize_t r = y * g.sh - g.pt + i * g.dh;                                  \
                        if (r < 0 || r >= h) {                                                      \
                            cols += g.kw * c;                                                       \
                            continue;                                                               \
                        }                                                                           \
                        T *o = out + (b * h + r) * w * c;                                           \
                        for (Py_ssize_t j = 0; j < g.kw; j++, cols += c) {                          \
                            Py_ssize_t q = z * g.sw - g.pl + j * g.dw;                              \
                            if (q < 0 || q >= w) continue;                                          \
                            T *oq = o + q * c;                                                      \
                            for (Py_ssize_t k = 0; k < c; k++) oq[k] += cols[k];                    \
                        }                                                                           \
                    }                                                                               \
    }

/* col2im(cols, out, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow): the adjoint of im2col into out [N, H, W, C] */
static PyObject *col2im(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 12) {
        PyErr_SetString(PyExc_TypeError, "col2im(cols, out, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow)");
        return NULL;
    }
    Arrays a = {.n_views = 0};
    Geom g;
    Py_ssize_t os[4];
    if (!get_conv_args(&a, &g, args, 1, os)) return result(&a, 0);
    Py_ssize_t n = os[0], h = os[1], w = os[2], c = os[3];
    Py_BEGIN_ALLOW_THREADS
    if (a.kind == 'f') COL2IM_LOOP(float) else COL2IM_LOOP(double)
    Py_END_ALLOW_THREADS
    return result(&a, 1);
}

/* max_pool_grad: for every window and channel, dy is added at the window's first maximum in row-major order
 * (a NaN counts as the maximum, as numpy's argmax); windows are visited in (n, y, z) order, channels inner. */
#define MAXPOOL_GRAD_LOOP(T)                                                                        \
    {                                                                                               \
        const T *x = (const T *)a.views[0].buf, *dy = (const T *)a.views[1].buf;                    \
        T *out = (T *)a.views[2].buf, *bv = (T *)vals;                                              \
        memset(out, 0, n * h * w * c * sizeof(T));                                                  \
        for (Py_ssize_t b = 0; b < n; b++)                                                          \
            for (Py_ssize_t y = 0; y < g.oh; y++)                                                   \
                for (Py_ssize_t z = 0; z < g.ow; z++, dy += c) {                                    \
                    Py_ssize_t r0 = y * g.sh - g.pt, q0 = z * g.sw - g.pl;                          \
                    Py_ssize_t r1 = r0 + g.kh < h ? r0 + g.kh : h, q1 = q0 + g.kw < w ? q0 + g.kw : w; \
                    if (r0 < 0) r0 = 0;                                                             \
                    if (q0 < 0) q0 = 0;                                                             \
                    if (r0 >= r1 || q0 >= q1) continue;                                             \
                    const T *x0 = x + ((b * h + r0) * w + q0) * c;                                  \
                    for (Py_ssize_t k = 0; k < c; k++) best[k] = 0, bv[k] = x0[k];                  \
                    int t = 0;                                                                      \
                    for (Py_ssize_t r = r0; r < r1; r++)                                            \
                        for (Py_ssize_t q = q0; q < q1; q++, t++) {                                 \
                            const T *xv = x + ((b * h + r) * w + q) * c;                            \
                            for (Py_ssize_t k = 0; k < c; k++) {                                    \
                                T v = xv[k], m = bv[k];                                             \
                                int take = v > m || (v != v && m == m);                             \
                                bv[k] = take ? v : m;                                               \
                                best[k] = take ? t : best[k];                                       \
                            }                                                                       \
                        }                                                                           \
                    const Py_ssize_t span = q1 - q0;                                                \
                    for (Py_ssize_t k = 0; k < c; k++) {                                            \
                        Py_ssize_t r = r0 + best[k] / span, q = q0 + best[k] % span;                \
                        out[((b * h + r) * w + q) * c + k] += dy[k];                                \
                    }                                                                               \
                }                                                                                   \
    }

/* max_pool_grad(x, dy, out, kh, kw, sh, sw, pt, pl, oh, ow): x and out [N, H, W, C], dy [N, OH, OW, C] */
static PyObject *max_pool_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 11) {
        PyErr_SetString(PyExc_TypeError, "max_pool_grad(x, dy, out, kh, kw, sh, sw, pt, pl, oh, ow)");
        return NULL;
    }
    Arrays a = {.n_views = 0};
    Geom g;
    if (!get_geom(args + 3, 8, &g)) return result(&a, 0);
    Py_buffer probe;
    if (!PyObject_CheckBuffer(args[0]) || PyObject_GetBuffer(args[0], &probe, PyBUF_ND) != 0) {
        PyErr_Clear();
        return result(&a, 0);
    }
    int ok = probe.ndim == 4;
    Py_ssize_t xs[4] = {0, 0, 0, 0};
    if (ok) memcpy(xs, probe.shape, sizeof xs);
    PyBuffer_Release(&probe);
    Py_ssize_t ys[4] = {xs[0], g.oh, g.ow, xs[3]};
    if (!ok || !get_shaped(&a, args[0], 0, 4, xs) || !get_shaped(&a, args[1], 0, 4, ys) ||
        !get_shaped(&a, args[2], 1, 4, xs) || !no_overlaps(&a))
        return result(&a, 0);
    Py_ssize_t n = xs[0], h = xs[1], w = xs[2], c = xs[3];
    int *best = PyMem_RawMalloc((c > 0 ? c : 1) * sizeof(int));
    double *vals = PyMem_RawMalloc((c > 0 ? c : 1) * sizeof(double));
    if (best == NULL || vals == NULL) {
        PyMem_RawFree(best);
        PyMem_RawFree(vals);
        PyErr_NoMemory();
        return result(&a, 0);
    }
    Py_BEGIN_ALLOW_THREADS
    if (a.kind == 'f') MAXPOOL_GRAD_LOOP(float) else MAXPOOL_GRAD_LOOP(double)
    Py_END_ALLOW_THREADS
    PyMem_RawFree(best);
    PyMem_RawFree(vals);
    return result(&a, 1);
}

/* ---- denormals: TF runs its kernels with denormals flushed to zero (FTZ + DAZ on x86, FZ on ARM) */

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <xmmintrin.h>
#define FP_FLUSH_BITS 0x8040u /* MXCSR: FTZ (bit 15) | DAZ (bit 6) */
static unsigned long fp_mode_get(void) { return _mm_getcsr(); }
static void fp_mode_set(unsigned long mode) { _mm_setcsr((unsigned int)mode); }
#elif defined(__aarch64__) && defined(__GNUC__)
#define FP_FLUSH_BITS (1ul << 24) /* FPCR.FZ */
static unsigned long fp_mode_get(void) {
    unsigned long fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    return fpcr;
}
static void fp_mode_set(unsigned long mode) { __asm__ __volatile__("msr fpcr, %0" : : "r"(mode)); }
#else
#define FP_FLUSH_BITS 0ul
static unsigned long fp_mode_get(void) { return 0; }
static void fp_mode_set(unsigned long mode) { (void)mode; }
#endif

/* flush_denormals() -> previous flush bits: this thread now flushes denormal inputs and results to zero */
static PyObject *flush_denormals(PyObject *self, PyObject *unused) {
    unsigned long mode = fp_mode_get();
    if ((mode & FP_FLUSH_BITS) != FP_FLUSH_BITS) fp_mode_set(mode | FP_FLUSH_BITS);
    return PyLong_FromUnsignedLong(mode & FP_FLUSH_BITS);
}

/* restore_denormals(bits): put back the flush bits flush_denormals returned (other mode bits untouched) */
static PyObject *restore_denormals(PyObject *self, PyObject *arg) {
    unsigned long old = PyLong_AsUnsignedLong(arg);
    if (old == (unsigned long)-1 && PyErr_Occurred()) return NULL;
    unsigned long mode = fp_mode_get();
    unsigned long want = (mode & ~FP_FLUSH_BITS) | (old & FP_FLUSH_BITS);
    if (want != mode) fp_mode_set(want);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"apply_gradient_descent", (PyCFunction)(void (*)(void))apply_gradient_descent, METH_FASTCALL,
     "var -= alpha * delta; False if the arrays are not supported"},
    {"apply_momentum", (PyCFunction)(void (*)(void))apply_momentum, METH_FASTCALL,
     "accum = accum * momentum + grad; var -= accum * lr (Nesterov: var -= grad * lr + accum * momentum * lr)"},
    {"apply_adagrad", (PyCFunction)(void (*)(void))apply_adagrad, METH_FASTCALL,
     "accum += grad * grad (if update_slots); var -= grad * lr / sqrt(accum)"},
    {"apply_adam", (PyCFunction)(void (*)(void))apply_adam, METH_FASTCALL,
     "Adam: m += (g - m)(1 - beta1); v += (g*g - v)(1 - beta2); var -= alpha * m / (sqrt(v) + epsilon)"},
    {"apply_rms_prop", (PyCFunction)(void (*)(void))apply_rms_prop, METH_FASTCALL,
     "RMSProp: ms += (g*g - ms)(1 - rho); mom = mom * momentum + g * lr / sqrt(ms + eps); var -= mom"},
    {"relu", (PyCFunction)(void (*)(void))relu, METH_FASTCALL, "out = max(x, 0); False if not supported"},
    {"relu_grad", (PyCFunction)(void (*)(void))relu_grad, METH_FASTCALL,
     "out = g * (features > 0); False if not supported"},
    {"sigmoid_grad", (PyCFunction)(void (*)(void))sigmoid_grad, METH_FASTCALL,
     "out = g * y * (1 - y); False if not supported"},
    {"tanh_grad", (PyCFunction)(void (*)(void))tanh_grad, METH_FASTCALL,
     "out = g * (1 - y * y); False if not supported"},
    {"im2col", (PyCFunction)(void (*)(void))im2col, METH_FASTCALL,
     "im2col(x, cols, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow): conv patches of NHWC x; False if not supported"},
    {"col2im", (PyCFunction)(void (*)(void))col2im, METH_FASTCALL,
     "col2im(cols, out, kh, kw, sh, sw, dh, dw, pt, pl, oh, ow): adjoint of im2col; False if not supported"},
    {"max_pool_grad", (PyCFunction)(void (*)(void))max_pool_grad, METH_FASTCALL,
     "max_pool_grad(x, dy, out, kh, kw, sh, sw, pt, pl, oh, ow): dy added at each window's first maximum"},
    {"flush_denormals", flush_denormals, METH_NOARGS,
     "Flush denormals to zero in this thread (as TF's kernels do); returns the previous bits"},
    {"restore_denormals", restore_denormals, METH_O, "Restore the bits flush_denormals returned"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernels",
                                    "Fused single-pass optimizer updates (optional; see core/train/ops.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&module); }
