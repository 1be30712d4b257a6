/* The density raster's inner loops (viewer/dashboard/density.py: its module docstring has the formula), one pass
 * over each run's points instead of numpy's array passes over every run at once: ~20x sooner on 10,000 runs.
 *
 *   add_runs(steps, values, first, diff, owner_key, x0, sx, y1, sy, width, height, runs, logy) -> [indices]
 *       Adds the runs steps[i], values[i] (1-d C-contiguous buffers: steps int64 or float64, values float32 or
 *       float64) to the difference raster diff and raises the owner keys as density._add_batch does, run i being
 *       run first + i of `runs`; both column by column, the transpose of _add_batch's: diff float64 (width,
 *       height + 1), owner_key int64 (width, height), so that the rows a run covers in a column are together in
 *       memory. Returns the indices of the runs it left out because their steps are not in order (the caller
 *       sorts those).
 *   finite_ranges(steps, values, logy) -> (step_min, step_max, value_min, value_max)
 *       The least and greatest step, and value that is finite (with logy: finite and positive); NaN for none.
 *
 * The arithmetic is density.py's, operation by operation in float64 (compiled without FMA contraction), so the
 * rows each run covers are the same; only the order in which weights are summed into the raster differs. The GIL
 * is released while the runs are added, so two densities asked at once use two CPUs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct {
    Py_buffer step, value;
    char step_kind, value_kind; /* 'q' int64 or 'd' float64; 'f' float32 or 'd' float64 */
    Py_ssize_t n;
} Run;

typedef struct {
    double *diff;
    int64_t *owner_key;
    double x0, sx, y1, sy;
    Py_ssize_t width, height, runs;
    int logy;
    /* the run being added and its intervals in the current column (before their union) */
    int64_t run;
    Py_ssize_t column;
    Py_ssize_t *lo, *hi;
    Py_ssize_t count, capacity;
} Raster;

static char kind_of(const Py_buffer *view) {
    const char *format = view->format;
    if (format == NULL) return 0;
    if (format[0] == '<' || format[0] == '=' || format[0] == '@') format++;
    if (format[1] != '\0') return 0;
    char k = format[0];
    if ((k == 'q' || k == 'l') && view->itemsize == 8) return 'q';
    if (k == 'd' && view->itemsize == 8) return 'd';
    if (k == 'f' && view->itemsize == 4) return 'f';
    return 0;
}

static double step_at(const Run *r, Py_ssize_t i) {
    return r->step_kind == 'q' ? (double)((const int64_t *)r->step.buf)[i] : ((const double *)r->step.buf)[i];
}

static double value_at(const Run *r, Py_ssize_t i) {
    return r->value_kind == 'f' ? (double)((const float *)r->value.buf)[i] : ((const double *)r->value.buf)[i];
}

static void release_runs(Run *runs, Py_ssize_t got) {
    for (Py_ssize_t i = 0; i < got; i++) {
        PyBuffer_Release(&runs[i].step);
        PyBuffer_Release(&runs[i].value);
    }
    PyMem_Free(runs);
}

/* Views of the runs' arrays; NULL with an exception set when one is not a supported buffer. */
static Run *get_runs(PyObject *steps, PyObject *values, Py_ssize_t *count) {
    if (!PyList_Check(steps) || !PyList_Check(values) || PyList_GET_SIZE(steps) != PyList_GET_SIZE(values)) {
        PyErr_SetString(PyExc_TypeError, "steps and values must be lists of the same length");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(steps);
    Run *runs = PyMem_Calloc(n > 0 ? n : 1, sizeof(Run));
    if (runs == NULL) return (Run *)PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < n; i++) {
        Run *r = &runs[i];
        int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT;
        if (PyObject_GetBuffer(PyList_GET_ITEM(steps, i), &r->step, flags) != 0) {
            release_runs(runs, i);
            return NULL;
        }
        if (PyObject_GetBuffer(PyList_GET_ITEM(values, i), &r->value, flags) != 0) {
            PyBuffer_Release(&r->step);
            release_runs(runs, i);
            return NULL;
        }
        r->step_kind = kind_of(&r->step);
        r->value_kind = kind_of(&r->value);
        r->n = r->step.len / (r->step.itemsize ? r->step.itemsize : 1);
        if (r->step.ndim != 1 || r->value.ndim != 1 || (r->step_kind != 'q' && r->step_kind != 'd') ||
            (r->value_kind != 'f' && r->value_kind != 'd') || r->value.len / r->value.itemsize != r->n) {
            release_runs(runs, i + 1);
            PyErr_Format(PyExc_TypeError, "run %zd: steps must be 1-d int64 or float64 and values 1-d float32 or "
                         "float64 of the same length", i);
            return NULL;
        }
    }
    *count = n;
    return runs;
}

/* One interval alone in its column: weight 1 / its rows. */
static inline void add_interval(Raster *g, Py_ssize_t c, Py_ssize_t lo, Py_ssize_t hi) {
    Py_ssize_t rows = hi - lo + 1;
    double w = 1.0 / (double)rows;
    int64_t key = (int64_t)(g->height - rows) * g->runs + (g->runs - 1 - g->run);
    double *diff = g->diff + c * (g->height + 1);
    int64_t *owner = g->owner_key + c * g->height;
    diff[lo] += w;
    diff[hi + 1] -= w;
    for (Py_ssize_t row = lo; row <= hi; row++)
        if (owner[row] < key) owner[row] = key;
}

/* The union of the current column's intervals: each disjoint part gets weight 1 / (rows of the union). */
static int flush_column(Raster *g) {
    if (g->count == 0) return 0;
    if (g->count == 1) { /* the common case: one connected part in the column */
        add_interval(g, g->column, g->lo[0], g->hi[0]);
        g->count = 0;
        return 0;
    }
    Py_ssize_t n = g->count, c = g->column;
    for (Py_ssize_t i = 1; i < n; i++) { /* insertion sort by top row: a column rarely has more than one */
        Py_ssize_t lo = g->lo[i], hi = g->hi[i], j = i;
        for (; j > 0 && g->lo[j - 1] > lo; j--) {
            g->lo[j] = g->lo[j - 1];
            g->hi[j] = g->hi[j - 1];
        }
        g->lo[j] = lo;
        g->hi[j] = hi;
    }
    Py_ssize_t merged = 0; /* in place: [0, merged) disjoint, not adjacent */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (merged && g->lo[i] <= g->hi[merged - 1] + 1) {
            if (g->hi[i] > g->hi[merged - 1]) g->hi[merged - 1] = g->hi[i];
        } else {
            g->lo[merged] = g->lo[i];
            g->hi[merged] = g->hi[i];
            merged++;
        }
    }
    Py_ssize_t rows = 0;
    for (Py_ssize_t i = 0; i < merged; i++) rows += g->hi[i] - g->lo[i] + 1;
    double w = 1.0 / (double)rows;
    int64_t key = (int64_t)(g->height - rows) * g->runs + (g->runs - 1 - g->run);
    double *diff = g->diff + c * (g->height + 1);   /* column by column: a column's rows are together */
    int64_t *owner = g->owner_key + c * g->height;
    for (Py_ssize_t i = 0; i < merged; i++) {
        diff[g->lo[i]] += w;
        diff[g->hi[i] + 1] -= w;
        for (Py_ssize_t row = g->lo[i]; row <= g->hi[i]; row++)
            if (owner[row] < key) owner[row] = key;
    }
    g->count = 0;
    return 0;
}

/* A connected part's block of column `col` spanning v from top to bottom: its rows, if the chart shows any. */
static inline int add_block(Raster *g, Py_ssize_t col, double top, double bottom) {
    if (!(col < g->width && bottom >= 0 && top <= (double)g->height)) return 0;
    double h1 = (double)(g->height - 1);
    double flo = floor(top), fhi = floor(bottom);
    Py_ssize_t lo = (Py_ssize_t)(flo < 0 ? 0 : (flo > h1 ? h1 : flo));
    Py_ssize_t hi = (Py_ssize_t)(fhi < 0 ? 0 : (fhi > h1 ? h1 : fhi));
    if (col != g->column) {
        flush_column(g);
        g->column = col;
    }
    if (g->count == g->capacity) {
        Py_ssize_t capacity = g->capacity ? 2 * g->capacity : 8;
        Py_ssize_t *lo_ = realloc(g->lo, capacity * sizeof(Py_ssize_t));
        if (lo_ == NULL) return -1;
        g->lo = lo_;
        Py_ssize_t *hi_ = realloc(g->hi, capacity * sizeof(Py_ssize_t));
        if (hi_ == NULL) return -1;
        g->hi = hi_;
        g->capacity = capacity;
    }
    g->lo[g->count] = lo;
    g->hi[g->count] = hi;
    g->count++;
    return 0;
}

typedef struct {
    int open;
    Py_ssize_t col;
    double top, bottom;
} Block;

/* One element of a part in x order (a point, or a crossing of a column's left edge). */
static inline int element(Raster *g, Block *b, Py_ssize_t col, double y) {
    if (b->open && col == b->col) {
        if (y < b->top) b->top = y;
        if (y > b->bottom) b->bottom = y;
        return 0;
    }
    if (b->open) {
        if (col == b->col + 1) { /* the part goes on: its crossing of this column's left edge ends the last */
            if (y < b->top) b->top = y;
            if (y > b->bottom) b->bottom = y;
        }
        if (add_block(g, b->col, b->top, b->bottom) < 0) return -1;
    }
    b->open = 1;
    b->col = col;
    b->top = b->bottom = y;
    return 0;
}

static int end_part(Raster *g, Block *b) {
    if (!b->open) return 0;
    b->open = 0;
    return add_block(g, b->col, b->top, b->bottom);
}

/* 1: added; 0: its steps are not in order; -1: out of memory. */
static int add_run(Raster *g, const Run *r) {
    Py_ssize_t n = r->n;
    for (Py_ssize_t i = 1; i < n; i++)
        if (step_at(r, i) < step_at(r, i - 1)) return 0;
    double width = (double)g->width, height = (double)g->height;
    double last_u = nextafter(width, 0.0);
    Block block = {0, 0, 0.0, 0.0};
    int have_prev = 0;
    double prev_u = 0.0, prev_v = 0.0, prev_fu = 0.0;
    g->column = -1;
    g->count = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        double t = value_at(r, i);
        if (g->logy) t = log10(t);
        double u = (step_at(r, i) - g->x0) * g->sx;
        double v = (g->y1 - t) * g->sy;
        if (t == INFINITY) v = 0.0;
        if (t == -INFINITY) v = height;
        if (u == width) u = last_u;
        if (isnan(v)) { /* a break */
            if (end_part(g, &block) < 0) return -1;
            have_prev = 0;
            continue;
        }
        double fu = floor(u);
        if (have_prev) { /* the crossings of the column edges b in (prev_u, u], from 0 to width */
            double b = prev_fu + 1.0;
            if (b < 0) b = 0;
            double b_last = fu < width ? fu : width;
            for (; b <= b_last; b += 1.0) {
                double v_b = prev_v + (v - prev_v) * ((b - prev_u) / (u - prev_u));
                if (element(g, &block, (Py_ssize_t)b, v_b) < 0) return -1;
            }
        }
        if (fu >= 0 && fu < width && element(g, &block, (Py_ssize_t)fu, v) < 0) return -1;
        have_prev = 1;
        prev_u = u;
        prev_v = v;
        prev_fu = fu;
    }
    if (end_part(g, &block) < 0) return -1;
    flush_column(g);
    return 1;
}

static PyObject *add_runs(PyObject *self, PyObject *args) {
    PyObject *steps, *values, *diff_obj, *owner_obj;
    Py_ssize_t first, width, height, runs;
    double x0, sx, y1, sy;
    int logy;
    if (!PyArg_ParseTuple(args, "OOnOOddddnnnp", &steps, &values, &first, &diff_obj, &owner_obj, &x0, &sx, &y1,
                          &sy, &width, &height, &runs, &logy))
        return NULL;
    if (width < 1 || height < 1) {
        PyErr_SetString(PyExc_ValueError, "width and height must be positive");
        return NULL;
    }
    Py_buffer diff, owner;
    if (PyObject_GetBuffer(diff_obj, &diff, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) != 0) return NULL;
    if (PyObject_GetBuffer(owner_obj, &owner, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) != 0) {
        PyBuffer_Release(&diff);
        return NULL;
    }
    if (kind_of(&diff) != 'd' || kind_of(&owner) != 'q' || diff.len != (height + 1) * width * 8 ||
        owner.len != height * width * 8) {
        PyBuffer_Release(&diff);
        PyBuffer_Release(&owner);
        PyErr_SetString(PyExc_ValueError, "diff must be float64 of (height + 1) * width, owner_key int64 of "
                        "height * width");
        return NULL;
    }
    Py_ssize_t count = 0;
    Run *list = get_runs(steps, values, &count);
    if (list == NULL) {
        PyBuffer_Release(&diff);
        PyBuffer_Release(&owner);
        return NULL;
    }
    char *left_out = PyMem_Calloc(count > 0 ? count : 1, 1);
    Raster g = {diff.buf, owner.buf, x0, sx, y1, sy, width, height, runs, logy, 0, -1, NULL, NULL, 0, 0};
    int failed = left_out == NULL;
    if (!failed) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < count; i++) {
            g.run = first + i;
            int added = add_run(&g, &list[i]);
            if (added < 0) {
                failed = 1;
                break;
            }
            left_out[i] = added == 0;
        }
        Py_END_ALLOW_THREADS
    }
    free(g.lo);
    free(g.hi);
    release_runs(list, count);
    PyBuffer_Release(&diff);
    PyBuffer_Release(&owner);
    if (failed) {
        PyMem_Free(left_out);
        return PyErr_NoMemory();
    }
    PyObject *result = PyList_New(0);
    for (Py_ssize_t i = 0; result != NULL && i < count; i++) {
        if (!left_out[i]) continue;
        PyObject *index = PyLong_FromSsize_t(i);
        if (index == NULL || PyList_Append(result, index) < 0) Py_CLEAR(result);
        Py_XDECREF(index);
    }
    PyMem_Free(left_out);
    return result;
}

static PyObject *finite_ranges(PyObject *self, PyObject *args) {
    PyObject *steps, *values;
    int logy;
    if (!PyArg_ParseTuple(args, "OOp", &steps, &values, &logy)) return NULL;
    Py_ssize_t count = 0;
    Run *list = get_runs(steps, values, &count);
    if (list == NULL) return NULL;
    double x_min = NAN, x_max = NAN, v_min = NAN, v_max = NAN;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < count; i++) {
        const Run *r = &list[i];
        for (Py_ssize_t j = 0; j < r->n; j++) {
            double x = step_at(r, j), v = value_at(r, j);
            if (!(x >= x_min)) x_min = x; /* (NaN: the first) */
            if (!(x <= x_max)) x_max = x;
            if (isfinite(v) && (!logy || v > 0)) {
                if (!(v >= v_min)) v_min = v;
                if (!(v <= v_max)) v_max = v;
            }
        }
    }
    Py_END_ALLOW_THREADS
    release_runs(list, count);
    return Py_BuildValue("dddd", x_min, x_max, v_min, v_max);
}

static PyMethodDef methods[] = {
    {"add_runs", add_runs, METH_VARARGS,
     "add runs to a density's difference raster and owner keys; the indices of the runs not in step order"},
    {"finite_ranges", finite_ranges, METH_VARARGS,
     "(step_min, step_max, value_min, value_max) of the runs, values finite (and positive with logy); NaN: none"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_density",
                                    "The density raster's inner loops (optional; see viewer/dashboard/density.py).",
                                    -1, methods};

PyMODINIT_FUNC PyInit__density(void) { return PyModule_Create(&module); }
