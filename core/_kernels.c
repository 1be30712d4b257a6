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

/* relu_grad(g, features, out): out = g * (features > 0)  (a product, as numpy's: inf * 0 is NaN) */
static PyObject *relu_grad(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "relu_grad(g, features, out)");
        return NULL;
    }
    Arrays a;
    if (!get_elementwise(&a, (PyObject **)args, 2, args[2])) return result(&a, 0);
    Py_ssize_t n = a.n;
    if (a.kind == 'f') {
        const float *g = F(0), *f = F(1);
        float *out = F(2);
        RUN(for (Py_ssize_t i = 0; i < n; i++) out[i] = g[i] * (float)(f[i] > 0.0f););
    } else {
        const double *g = D(0), *f = D(1);
        double *out = D(2);
        RUN(for (Py_ssize_t i = 0; i < n; i++) out[i] = g[i] * (double)(f[i] > 0.0););
    }
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
    {"flush_denormals", flush_denormals, METH_NOARGS,
     "Flush denormals to zero in this thread (as TF's kernels do); returns the previous bits"},
    {"restore_denormals", restore_denormals, METH_O, "Restore the bits flush_denormals returned"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernels",
                                    "Fused single-pass optimizer updates (optional; see core/train/ops.py).", -1,
                                    methods};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&module); }
