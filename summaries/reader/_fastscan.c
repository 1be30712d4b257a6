/* Scalar fast path of the offline reader: frames TFRecords, checks both CRC32C checksums and
 * decodes scalar summaries straight from the protobuf wire format into per-tag columns.
 *
 *   Scanner(accept, want_other, check_crc, keep=None)
 *     accept(tag: str) -> bool   called once per new tag; rows of refused tags are dropped
 *     want_other: bit 1 graphs, bit 2 run metadata, bit 4 non-scalar summaries,
 *                 bit 8 described histograms (see take_histograms)
 *     keep(tag: str, metadata: bytes | None, first_what: str) -> int   called once per accepted new tag, with
 *                 the kind of its first row ('simple_value', 'tensor', 'histo'): the capacity of the reservoir the
 *                 rows of that kind go to (0: none; every row is kept). They are reduced to what that reservoir
 *                 would keep of them (see reduce_rows)
 *   Scanner.feed(buf, base) -> (status, used, length)
 *     frames the complete records of buf (buf[0] is at file offset base) and stops at
 *     status 0: an incomplete record at buf[used:] (length = its full size if its header is whole)
 *     status 1: a bad length checksum at buf[used]
 *     status 2: a bad payload checksum at buf[used] (length = its full size)
 *   Scanner.take_others() -> [(offset, payload bytes)]  records left to the proto-based decoder:
 *     file_version, session_log, anything not a pure scalar summary, unparseable payloads
 *   Scanner.take_histograms() -> [(tag, reduced, min_wall_time, payloads, [(offset, start, end, step, wall_time)])]
 *     with want_other bit 8, the events whose summary is one value of a tag (valid UTF-8) and a HistogramProto
 *     of the usual layout, nothing else, by tag, described (payloads[start:end] each one's payload): the caller
 *     may leave the histogram undecoded until it needs it (the live loader decodes only the ones it keeps); the
 *     scanner then forgets them
 *   Scanner.columns() -> [(tag, meta_offset, meta bytes | None, rows, from_tensor, reduced, min_wall_time,
 *                          (min, min_step, max, max_step, stepped_back))]
 *     rows: a RowsBuffer, a read-only buffer of 32-byte rows (int64 offset, int64 step, float64 wall_time,
 *     float64 value); from_tensor: some rows were tensors; reduced: rows were dropped as the tag's reservoir
 *     would; min_wall_time: the least finite wall time of all its rows (inf: none); then the least and greatest
 *     value of its rows with a finite wall time, reduced ones included, NaN left out (NaN and step -1: none), and
 *     whether a row's step was not above the one before
 *   Scanner.records  number of framed records;  Scanner.held_bytes  bytes of rows and histograms held now
 *
 * feed() releases the GIL while it frames and decodes (see "per-tag columns" below), so threads
 * scanning different files run in parallel; one Scanner serves one feed() at a time.
 *
 * A summary goes to the columns only if every value in it is a simple_value or a rank-0 float,
 * double, half, int32 or int64 tensor (with a tag); otherwise the whole event goes to the
 * proto-based decoder, so one event is never split between the two paths. Framing semantics are
 * those of record.py (which the pure-Python reader uses); tests run both paths on the same files.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <limits.h>

#include "_fastscan_wire.h"

/* ------------------------------------------------------------------ per-tag rows
 *
 * feed() runs its record loop without the GIL, so nothing the loop touches is a Python object.
 * The loop appends each fast value as a Row to its tag's array (raw C memory, PyMem_Raw*, grown by
 * doubling), and each described lone histogram (want_other bit 8) as a Row holding a copy of its
 * payload to the tag's second array; creates tags it has not seen (their verdict pending); and notes
 * the records left to the proto decoder as positions in the caller's buffer. After the loop, with the GIL back, feed()
 * settles the chunk: the noted records become (offset, bytes) while it still holds the buffer;
 * each new tag gets its Python name, its accept() verdict (a refused tag's rows are dropped) and
 * its keep() capacity; and a tag with a capacity that holds more than twice it is reduced to what a
 * reservoir of that capacity would keep (reduce_rows), so a scan holds few rows per tag whatever the
 * length of the file. The capacity applies to the kind of the tag's first row (scalar or histogram);
 * rows of the other kind are all kept. columns() hands each tag's scalar rows to Python as they are
 * (a RowsBuffer), without copying (a later feed() that adds rows to the tag copies them back first);
 * take_histograms() hands out the histograms' payloads and frees them.
 */

/* One value: a scalar (the layout of ROW in scan.py), or a histogram, whose payload is `blob`: its length (a
   size_t) then its bytes, owned by the row; NULL while the payload is still in the chunk being read (the record at
   `offset`), until settle_chunk() copies the payloads of the rows still held. */
typedef struct { int64_t offset, step; double wall; union { double value; uint8_t *blob; }; } Row;

/* The least and greatest value of the scalar rows with a finite wall time (reduced ones included; NaN values left
   out; the first of equal ones), with their steps; whether a row's step was not above the one before (a restart,
   whose preempted rows these may still count). */
typedef struct {
    double vmin, vmax; int64_t vmin_step, vmax_step, last_step;
    int has_rows, has_extremes, stepped_back;
} Extremes;

/* The rows of one kind of a tag; see reduce_rows() for keep, filtering and threshold. */
typedef struct {
    Row *rows; Py_ssize_t n, cap;   /* rows[0:n]; NULL with n > 0 while the tag's `handed` holds them */
    Py_ssize_t settled;             /* rows[0:settled] were there before this chunk */
    Py_ssize_t keep;                /* reservoir capacity from keep() (0: every row is kept) */
    int blobs;                      /* the rows own blobs */
    int reduced;                    /* reduction dropped rows */
    int filtering;                  /* rows are filtered on arrival by `threshold` */
    uint64_t threshold;
    Extremes ext, settled_ext;      /* scalars: of every row; of rows[0:settled] (a failed chunk goes back to it) */
} RowSet;

/* A tag's rows, handed to Python: owns the array, exports it as a buffer of bytes. */
typedef struct {
    PyObject_HEAD
    Row *rows;
    Py_ssize_t n;
} RowsBuffer;

static int RowsBuffer_getbuffer(RowsBuffer *self, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)self, self->rows, self->n * (Py_ssize_t)sizeof(Row), 1, flags);
}

static void RowsBuffer_dealloc(RowsBuffer *self) {
    PyMem_RawFree(self->rows);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static Py_ssize_t RowsBuffer_len(RowsBuffer *self) { return self->n; }

static PyBufferProcs RowsBuffer_as_buffer = {(getbufferproc)RowsBuffer_getbuffer, NULL};
static PySequenceMethods RowsBuffer_as_sequence = {.sq_length = (lenfunc)RowsBuffer_len};

static PyTypeObject RowsBufferType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfevents.summaries._fastscan.RowsBuffer",
    .tp_basicsize = sizeof(RowsBuffer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)RowsBuffer_dealloc,
    .tp_as_buffer = &RowsBuffer_as_buffer,
    .tp_as_sequence = &RowsBuffer_as_sequence,
    .tp_doc = "One tag's rows (int64 offset, int64 step, float64 wall_time, float64 value; 32 bytes each), read-only.",
};

enum { TAG_REFUSED, TAG_ACCEPTED, TAG_PENDING };  /* Tag.verdict: PENDING until feed() asks accept() */

typedef struct {
    uint8_t *key; size_t key_len; uint64_t hash;   /* the tag's UTF-8 bytes */
    Py_ssize_t next;                /* the tag whose value came right after this one's last time (-1: none) */
    int verdict, from_tensor;
    int first_what;                 /* its first row: FIRST_SIMPLE_VALUE, FIRST_TENSOR or FIRST_HISTO (0: none) */
    PyObject *name;                 /* str; NULL while the verdict is pending */
    PyObject *meta;                 /* bytes: the tag's first SummaryMetadata (NULL: none, or still staged) */
    int64_t meta_offset;            /* the offset of its record (-1: none seen yet) */
    uint8_t *staged_meta; size_t staged_meta_len;  /* the first metadata, found by this chunk's loop */
    RowSet scalars, histos;         /* its scalar rows, its described histograms */
    PyObject *handed;               /* the RowsBuffer columns() last made of the scalar rows, or NULL */
    double min_wall;                /* least finite wall time of its rows, reduced ones included (inf: none) */
} Tag;

enum { FIRST_SIMPLE_VALUE = 1, FIRST_TENSOR, FIRST_HISTO };
static const char *const FIRST_WHAT[] = {"", "simple_value", "tensor", "histo"};  /* initial_metadata()'s words */

/* A record for the proto decoder, noted during the loop: its payload is buf[pos:pos + len]. */
typedef struct { int64_t offset; Py_ssize_t pos, len; } Other;

/* A lone histogram as decode_event() describes it: its event's step and wall time, its tag at payload[tag_pos:]. */
typedef struct { int64_t step; double wall; Py_ssize_t tag_pos, tag_len; } Described;

typedef struct {
    PyObject_HEAD
    PyObject *accept, *keep;
    int want_other, check_crc;
    int busy;                       /* a feed() is running: the tags are not to be read or changed */
    PyObject *others;               /* list of (offset, bytes) */
    Other *pending; Py_ssize_t npending, pending_cap;  /* this chunk's records for the proto decoder */
    Tag *tags; Py_ssize_t ntags, tags_cap;
    Py_ssize_t *slots; Py_ssize_t nslots; /* open addressing: index+1 into tags, 0 empty */
    Py_ssize_t last;                /* last tag hit */
    Py_ssize_t records;
    Py_ssize_t blob_bytes;          /* bytes of the histograms' payloads held */
} Scanner;

static uint64_t fnv1a(const uint8_t *p, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    while (n--) { h ^= *p++; h *= 1099511628211ULL; }
    return h;
}

static void insert_slot(Scanner *s, Py_ssize_t idx) {
    Py_ssize_t j = (Py_ssize_t)(s->tags[idx].hash & (uint64_t)(s->nslots - 1));
    while (s->slots[j]) j = (j + 1) & (s->nslots - 1);
    s->slots[j] = idx + 1;
}

/* Double the hash table; -1 when out of memory. No GIL needed. */
static int grow_slots(Scanner *s) {
    Py_ssize_t n = s->nslots ? s->nslots * 2 : 64;
    Py_ssize_t *slots = PyMem_RawCalloc((size_t)n, sizeof(Py_ssize_t));
    if (!slots) return -1;
    PyMem_RawFree(s->slots);
    s->slots = slots;
    s->nslots = n;
    for (Py_ssize_t i = 0; i < s->ntags; i++) insert_slot(s, i);
    return 0;
}

static inline int same_key(const Tag *t, const uint8_t *key, size_t len) {
    return t->key_len == len && memcmp(t->key, key, len) == 0;
}

/* Make `idx` the last tag hit, noting it as the successor of the previous one. */
static inline Py_ssize_t hit(Scanner *s, Py_ssize_t idx) {
    if (s->last >= 0) s->tags[s->last].next = idx;
    return s->last = idx;
}

/* Index of a known tag, or -1. No GIL needed. A training loop logs its tags in the same order step after step, so
   the tag that followed the last one last time is tried first (one compare, no hash), then the last one itself,
   then the hash table. */
static Py_ssize_t known_tag(Scanner *s, const uint8_t *key, size_t len, uint64_t *hash) {
    if (s->last >= 0) {
        Py_ssize_t next = s->tags[s->last].next;
        if (next >= 0 && next < s->ntags && same_key(&s->tags[next], key, len)) return s->last = next;
        if (same_key(&s->tags[s->last], key, len)) return s->last;
    }
    uint64_t h = *hash = fnv1a(key, len);
    if (s->nslots) {
        Py_ssize_t j = (Py_ssize_t)(h & (uint64_t)(s->nslots - 1));
        while (s->slots[j]) {
            Tag *t = &s->tags[s->slots[j] - 1];
            if (t->hash == h && same_key(t, key, len)) return hit(s, s->slots[j] - 1);
            j = (j + 1) & (s->nslots - 1);
        }
    }
    return -1;
}

/* Index of the tag, creating it (verdict pending) if new; -1 when out of memory. No GIL needed. */
static Py_ssize_t find_tag(Scanner *s, const uint8_t *key, size_t len) {
    uint64_t h = 0;
    Py_ssize_t known = known_tag(s, key, len, &h);
    if (known >= 0) return known;  /* (else h is the key's hash) */
    if ((s->ntags + 1) * 2 > s->nslots && grow_slots(s) < 0) return -1;
    if (s->ntags == s->tags_cap) {
        Py_ssize_t cap = s->tags_cap ? s->tags_cap * 2 : 16;
        Tag *tags = PyMem_RawRealloc(s->tags, (size_t)cap * sizeof(Tag));
        if (!tags) return -1;
        s->tags = tags;
        s->tags_cap = cap;
    }
    Tag *t = &s->tags[s->ntags];
    memset(t, 0, sizeof(Tag));
    t->key = PyMem_RawMalloc(len ? len : 1);
    if (!t->key) return -1;
    memcpy(t->key, key, len);
    t->key_len = len;
    t->hash = h;
    t->meta_offset = -1;
    t->next = -1;
    t->verdict = TAG_PENDING;
    t->min_wall = INFINITY;
    t->histos.blobs = 1;
    Py_ssize_t idx = s->ntags++;
    insert_slot(s, idx);
    return hit(s, idx);
}

/* Free the blobs of rows[from:to] of a set (no-op for scalars). */
static void free_blobs(Scanner *s, RowSet *rs, Py_ssize_t from, Py_ssize_t to) {
    if (!rs->blobs || !rs->rows) return;
    for (Py_ssize_t i = from; i < to; i++) {
        if (!rs->rows[i].blob) continue;
        s->blob_bytes -= (Py_ssize_t)*(size_t *)rs->rows[i].blob;
        PyMem_RawFree(rs->rows[i].blob);
    }
}

/* Empty a set, freeing its memory (its `handed` rows, if any, stay with the RowsBuffer). */
static void clear_rows(Scanner *s, RowSet *rs) {
    free_blobs(s, rs, 0, rs->n);
    PyMem_RawFree(rs->rows);
    int blobs = rs->blobs;
    memset(rs, 0, sizeof(RowSet));
    rs->blobs = blobs;
}

/* With the GIL: drop the rows and metadata this chunk's loop added (and the bytes settle_meta() made of the
   metadata before the chunk then failed). */
static void drop_chunk(Scanner *s, Tag *t) {
    RowSet *sets[2] = {&t->scalars, &t->histos};
    for (int k = 0; k < 2; k++) {
        free_blobs(s, sets[k], sets[k]->settled, sets[k]->n);
        sets[k]->n = sets[k]->settled;
        sets[k]->ext = sets[k]->settled_ext;
    }
    if (t->staged_meta) {  /* the tag had no metadata before this chunk */
        PyMem_RawFree(t->staged_meta);
        t->staged_meta = NULL; t->staged_meta_len = 0; t->meta_offset = -1;
        Py_CLEAR(t->meta);
    }
}

/* Forget the tags from index `first` on, as if never seen (with the GIL: they may hold objects). */
static void forget_tags(Scanner *s, Py_ssize_t first) {
    for (Py_ssize_t i = first; i < s->ntags; i++) {
        Tag *t = &s->tags[i];
        clear_rows(s, &t->scalars);
        clear_rows(s, &t->histos);
        PyMem_RawFree(t->staged_meta);
        PyMem_RawFree(t->key);
        Py_CLEAR(t->handed);
        Py_CLEAR(t->name);
        Py_CLEAR(t->meta);
    }
    if (first >= s->ntags) return;
    s->ntags = first;
    s->last = -1;
    memset(s->slots, 0, (size_t)s->nslots * sizeof(Py_ssize_t));
    for (Py_ssize_t i = 0; i < s->ntags; i++) insert_slot(s, i);
}

/* ------------------------------------------------------------------ reducing a tag's rows to a reservoir's
 *
 * What summaries/live/reservoir.py keeps of a chunk, given the rows kept so far and its capacity k: points with a
 * finite wall time; of those, the survivors of preemption (a point is dropped by any later one whose step is <= its
 * own); of the survivors, the last, the first (its step is the chunk's least, which decides which kept points the
 * chunk preempts) and the k - 1 others of least priority (splitmix64 of the step: reservoir.py's _priority).
 * Offering the reduced rows leaves a reservoir as offering them all would: a survivor left out has k - 1 survivors
 * of lower priority that outrank it whatever the reservoir already holds.
 *
 * The same holds of a row that arrives later with a priority above the threshold of the last reduction (the
 * (k - 1)-th least priority), as long as no row since has preempted any (which could remove a row below it) or had
 * a wall time that is not finite: append_row() drops such a row as soon as another follows it (the last row is
 * always kept), so a long series is mostly filtered on arrival. Pure C: no GIL needed. */

static inline uint64_t priority(int64_t step) {
    uint64_t z = (uint64_t)step + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The k-th smallest (0-based) of a[0:n] (k < n), reordering a (quickselect; the priorities are well mixed, so the
   middle element is as good a pivot as any). */
static uint64_t kth_smallest(uint64_t *a, Py_ssize_t n, Py_ssize_t k) {
    Py_ssize_t lo = 0, hi = n - 1;
    while (lo < hi) {
        uint64_t pivot = a[lo + (hi - lo) / 2];
        Py_ssize_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot) i++;
            while (a[j] > pivot) j--;
            if (i <= j) { uint64_t x = a[i]; a[i] = a[j]; a[j] = x; i++; j--; }
        }
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return a[k];
    }
    return a[k];
}

/* Free the blob of a row that is dropped. */
static inline void drop_row(Scanner *s, RowSet *rs, Row *r) {
    if (rs->blobs && r->blob) {
        s->blob_bytes -= (Py_ssize_t)*(size_t *)r->blob;
        PyMem_RawFree(r->blob);
    }
}

/* Reduce rows[0:n] of a set with capacity keep > 0 (see above); 0, or -1 when out of memory (nothing dropped but
   rows that no reservoir keeps). */
static int reduce_rows(Scanner *s, RowSet *rs) {
    Row *r = rs->rows;
    Py_ssize_t n = rs->n, m = 0, k = rs->keep;
    if (!r || !k) return 0;
    for (Py_ssize_t i = 0; i < n; i++) {   /* finite wall times, then survivors: a stack of increasing steps */
        if (!isfinite(r[i].wall)) { drop_row(s, rs, &r[i]); continue; }
        while (m > 0 && r[m - 1].step >= r[i].step) drop_row(s, rs, &r[--m]);
        r[m++] = r[i];
    }
    rs->filtering = 0;
    if (m > k + 1) {
        uint64_t *prio = PyMem_RawMalloc((size_t)(m - 1) * sizeof(uint64_t));
        if (!prio) {
            rs->reduced |= m < n;
            rs->n = m;
            return -1;
        }
        for (Py_ssize_t i = 0; i < m - 1; i++) prio[i] = priority(r[i].step);
        int some = k > 1;
        uint64_t threshold = some ? kth_smallest(prio, m - 1, k - 2) : 0;
        PyMem_RawFree(prio);
        Py_ssize_t j = 1;                  /* the first stays */
        for (Py_ssize_t i = 1; i < m - 1; i++) {
            if (some && priority(r[i].step) <= threshold) r[j++] = r[i];
            else drop_row(s, rs, &r[i]);
        }
        r[j++] = r[m - 1];                 /* and the last */
        m = j;
        rs->filtering = 1;
        rs->threshold = threshold;
    }
    rs->reduced |= m < n;
    rs->n = m;
    return 0;
}

/* ------------------------------------------------------------------ settling a chunk, with the GIL */

/* Name each tag first seen in the chunk, ask accept() about it, in the order first seen; a refused tag's rows are
   dropped. On error the tags not yet settled are forgotten. */
static int settle_tags(Scanner *s, Py_ssize_t first) {
    for (Py_ssize_t i = first; i < s->ntags; i++) {
        Tag *t = &s->tags[i];  /* stays valid: `busy` keeps accept() from re-entering feed() */
        PyObject *name = PyUnicode_DecodeUTF8((const char *)t->key, (Py_ssize_t)t->key_len, "replace");
        int ok = name != NULL, accepted = 1;
        if (ok && s->accept != Py_None) {
            PyObject *r = PyObject_CallOneArg(s->accept, name);
            accepted = r ? PyObject_IsTrue(r) : -1;
            Py_XDECREF(r);
            ok = accepted >= 0;
        }
        if (!ok) {
            Py_XDECREF(name);
            forget_tags(s, i);
            return -1;
        }
        t->name = name;
        t->verdict = accepted ? TAG_ACCEPTED : TAG_REFUSED;
        if (!accepted) {  /* its rows are never wanted: free them */
            drop_chunk(s, t);
            clear_rows(s, &t->scalars);
            clear_rows(s, &t->histos);
            t->from_tensor = 0;
        }
    }
    return 0;
}

/* The bytes of an accepted tag's metadata staged by this chunk. */
static int settle_meta(Tag *t) {
    if (t->staged_meta && !t->meta) {
        t->meta = PyBytes_FromStringAndSize((const char *)t->staged_meta, (Py_ssize_t)t->staged_meta_len);
        if (!t->meta) return -1;
    }
    return 0;
}

/* keep(tag, metadata, first_what) of a new accepted tag: the capacity of the reservoir of its first row's kind
   (0: keep every row). */
static int settle_keep(Scanner *s, Tag *t) {
    if (s->keep == Py_None || !t->first_what) return 0;
    PyObject *r = PyObject_CallFunction(s->keep, "OOs", t->name, t->meta ? t->meta : Py_None, FIRST_WHAT[t->first_what]);
    if (!r) return -1;
    Py_ssize_t k = PyLong_AsSsize_t(r);
    Py_DECREF(r);
    if (k == -1 && PyErr_Occurred()) return -1;
    (t->first_what == FIRST_HISTO ? &t->histos : &t->scalars)->keep = k > 0 ? k : 0;
    return 0;
}

/* Append one row to a tag's array (taking back the rows columns() handed out, if any); -1 when out of memory.
   No GIL needed. */
static int append_row(Scanner *s, Tag *t, RowSet *rs, Row row) {
    if (!rs->blobs && isfinite(row.wall)) {   /* the value's extremes */
        Extremes *e = &rs->ext;
        if (e->has_rows && row.step <= e->last_step) e->stepped_back = 1;
        if (!e->has_rows || row.step > e->last_step) e->last_step = row.step;
        e->has_rows = 1;
        if (!isnan(row.value)) {
            if (!e->has_extremes || row.value < e->vmin) { e->vmin = row.value; e->vmin_step = row.step; }
            if (!e->has_extremes || row.value > e->vmax) { e->vmax = row.value; e->vmax_step = row.step; }
            e->has_extremes = 1;
        }
    }
    if (rs->filtering) {   /* see reduce_rows: the last row of this chunk, if outranked, gives way to the new one */
        Row *last = &rs->rows[rs->n - 1];
        if (!isfinite(row.wall) || row.step <= last->step) {
            rs->filtering = 0;
        } else if (rs->n - 1 >= rs->settled && priority(last->step) > rs->threshold) {
            drop_row(s, rs, last);
            *last = row;
            rs->reduced = 1;
            return 0;
        }
    }
    if (rs->n == rs->cap || !rs->rows) {
        Py_ssize_t cap = rs->cap > rs->n ? rs->cap : (rs->n ? rs->n * 2 : 16);
        if (cap > PY_SSIZE_T_MAX / (Py_ssize_t)sizeof(Row)) return -1;
        Row *rows = PyMem_RawRealloc(rs->rows, (size_t)cap * sizeof(Row));
        if (!rows) return -1;
        if (!rs->rows && rs->n)   /* handed out: the RowsBuffer keeps its own; work on a copy */
            memcpy(rows, ((RowsBuffer *)t->handed)->rows, (size_t)rs->n * sizeof(Row));
        rs->rows = rows;
        rs->cap = cap;
    }
    rs->rows[rs->n++] = row;
    return 0;
}

/* The first row of a tag (of either kind) and its wall time. */
static inline void note_row(Tag *t, int first_what, double wall) {
    if (!t->first_what) t->first_what = first_what;
    if (isfinite(wall) && wall < t->min_wall) t->min_wall = wall;
}

/* Append one fast value to its tag (unless the tag is refused); -1 when out of memory.
   Rows of a tag whose verdict is pending are kept too, until feed() asks accept(). No GIL needed. */
static int emit_value(Scanner *s, const FastValue *fv, int64_t offset, int64_t step, double wall) {
    Py_ssize_t ti = fv->tag_index >= 0 ? fv->tag_index : find_tag(s, fv->tag, fv->tag_len);
    if (ti < 0) return -1;
    Tag *t = &s->tags[ti];
    if (t->verdict == TAG_REFUSED) return 0;
    if (fv->has_meta && t->meta_offset < 0) {
        t->staged_meta = PyMem_RawMalloc(fv->meta_len ? fv->meta_len : 1);
        if (!t->staged_meta) return -1;
        memcpy(t->staged_meta, fv->meta, fv->meta_len);
        t->staged_meta_len = fv->meta_len;
        t->meta_offset = offset;
    }
    note_row(t, fv->is_tensor ? FIRST_TENSOR : FIRST_SIMPLE_VALUE, wall);
    t->from_tensor |= fv->is_tensor;
    Row row = {.offset = offset, .step = step, .wall = wall, .value = fv->value};
    return append_row(s, t, &t->scalars, row);
}

/* Append a described lone histogram (the record at `offset`, its tag at tag[0:tag_len]) to its tag, its payload
   left in the chunk for now (unless the tag is refused); -1 when out of memory. No GIL needed. */
static int emit_histogram(Scanner *s, const uint8_t *tag, size_t tag_len, int64_t offset, int64_t step, double wall) {
    Py_ssize_t ti = find_tag(s, tag, tag_len);
    if (ti < 0) return -1;
    Tag *t = &s->tags[ti];
    if (t->verdict == TAG_REFUSED) return 0;
    note_row(t, FIRST_HISTO, wall);
    Row row = {.offset = offset, .step = step, .wall = wall, .blob = NULL};
    return append_row(s, t, &t->histos, row);
}

/* Copy the payloads of a set's rows that are still in the chunk `buf` (which starts at file offset `base`); -1 when
   out of memory (no exception set). No GIL needed. */
static int copy_payloads(Scanner *s, RowSet *rs, const uint8_t *buf, int64_t base) {
    for (Py_ssize_t i = rs->settled; i < rs->n; i++) {
        Row *r = &rs->rows[i];
        if (r->blob) continue;
        const uint8_t *record = buf + (r->offset - base);
        size_t len = (size_t)rd64(record);
        uint8_t *blob = PyMem_RawMalloc(sizeof(size_t) + (len ? len : 1));
        if (!blob) return -1;
        memcpy(blob, &len, sizeof(size_t));
        memcpy(blob + sizeof(size_t), record + 12, len);
        r->blob = blob;
        s->blob_bytes += (Py_ssize_t)len;
    }
    return 0;
}

/* Note a record for the proto decoder (payload at buf[pos:pos + len]); -1 when out of memory. No GIL needed. */
static int note_other(Scanner *s, int64_t offset, Py_ssize_t pos, Py_ssize_t len) {
    if (s->npending == s->pending_cap) {
        Py_ssize_t cap = s->pending_cap ? s->pending_cap * 2 : 64;
        Other *pending = PyMem_RawRealloc(s->pending, (size_t)cap * sizeof(Other));
        if (!pending) return -1;
        s->pending = pending;
        s->pending_cap = cap;
    }
    s->pending[s->npending] = (Other){.offset = offset, .pos = pos, .len = len};
    s->npending++;
    return 0;
}

/* With the GIL, after the loop: settle the chunk `buf`, which starts at file offset `base` (see the top of this
   section). */
static int settle_chunk(Scanner *s, const uint8_t *buf, int64_t base, Py_ssize_t first_new) {
    int ok = 1;
    for (Py_ssize_t i = 0; ok && i < s->npending; i++) {
        const Other *o = &s->pending[i];
        PyObject *item = Py_BuildValue("(Ly#)", (long long)o->offset, (const char *)buf + o->pos, o->len);
        ok = item && PyList_Append(s->others, item) == 0;
        Py_XDECREF(item);
    }
    s->npending = 0;
    if (ok) ok = settle_tags(s, first_new) == 0;
    for (Py_ssize_t i = 0; ok && i < s->ntags; i++) {  /* first everything that may fail, */
        Tag *t = &s->tags[i];
        if (t->verdict == TAG_ACCEPTED) ok = settle_meta(t) == 0 && (i < first_new || settle_keep(s, t) == 0);
    }
    if (!ok) {                                         /* then leave no trace of the chunk, */
        for (Py_ssize_t i = 0; i < s->ntags; i++) drop_chunk(s, &s->tags[i]);
        forget_tags(s, first_new);
        return -1;
    }
    for (Py_ssize_t i = 0; i < s->ntags; i++) {        /* or keep it, */
        Tag *t = &s->tags[i];
        if (t->verdict != TAG_ACCEPTED) continue;
        PyMem_RawFree(t->staged_meta);
        t->staged_meta = NULL; t->staged_meta_len = 0;
        if (t->scalars.rows && t->handed) Py_CLEAR(t->handed);  /* the tag's rows were taken back */
    }
    Py_BEGIN_ALLOW_THREADS                             /* and reduce what grew, without the GIL */
    for (Py_ssize_t i = 0; i < s->ntags; i++) {
        Tag *t = &s->tags[i];
        if (t->verdict != TAG_ACCEPTED) continue;
        RowSet *sets[2] = {&t->scalars, &t->histos};
        for (int k = 0; k < 2; k++) {
            if (sets[k]->keep && sets[k]->n >= 2 * sets[k]->keep + 64)
                reduce_rows(s, sets[k]);  /* (out of memory: reduced later) */
            sets[k]->settled = sets[k]->n;
            sets[k]->settled_ext = sets[k]->ext;
        }
    }
    Py_END_ALLOW_THREADS
    return 0;
}

/* After fast_value(): whether the value's tag is a known one (its index noted in fv) or valid UTF-8 (a new one:
   a tag that is not is left to the proto decoder, which reports the record). No GIL needed. */
static int tag_ok(Scanner *s, FastValue *fv) {
    uint64_t h;
    fv->tag_index = fv->tag_len ? known_tag(s, fv->tag, fv->tag_len, &h) : -1;
    return fv->tag_index >= 0 || utf8_ok(fv->tag, fv->tag_len);
}

/* A HistogramProto as protobuf writes it: doubles 1-5, packed doubles 6-7, nothing else (else 0: the proto
   decoder takes the event, as it always could). No GIL needed. */
static int histo_ok(Cur h) {
    uint64_t key;
    while (h.p < h.end) {
        if (!field_key(&h, &key)) return 0;
        int f = (int)(key >> 3), wt = (int)(key & 7);
        Cur s;
        if (f >= 1 && f <= 5) {
            if (wt != 1 || h.end - h.p < 8) return 0;
            h.p += 8;
        } else if (f == 6 || f == 7) {
            if (wt != 2 || !bytes_field(&h, &s) || (s.end - s.p) % 8) return 0;
        } else return 0;
    }
    return 1;
}

/* A Summary.Value that is a tag (non-empty, valid UTF-8) and a histo, each once, nothing else: 1 and its tag. */
static int lone_histogram(Cur v, const uint8_t **tag, size_t *tag_len) {
    uint64_t key;
    int have_tag = 0, have_histo = 0;
    while (v.p < v.end) {
        if (!field_key(&v, &key)) return 0;
        int f = (int)(key >> 3), wt = (int)(key & 7);
        Cur s;
        if (f == 1 && wt == 2 && !have_tag) {
            if (!bytes_field(&v, &s) || s.p == s.end || !utf8_ok(s.p, (size_t)(s.end - s.p))) return 0;
            *tag = s.p; *tag_len = (size_t)(s.end - s.p); have_tag = 1;
        } else if (f == 5 && wt == 2 && !have_histo) {
            if (!bytes_field(&v, &s) || !histo_ok(s)) return 0;
            have_histo = 1;
        } else return 0;
    }
    return have_tag && have_histo;
}

/* The usual scalar event, as TF1, tensorboardX, torch and our writer write it, matched byte for byte: wall_time,
   step, and a summary of one value, a tag (non-empty) and a simple_value, in field order and nothing else. 1 when
   it was (its value emitted), 0 when the payload is anything else (decode_event() reads it), -1 out of memory. The
   same value decode_event() would emit, without its general field loops. No GIL needed. */
static int simple_event(Scanner *s, const uint8_t *p, size_t n, int64_t offset) {
    uint64_t step, len;
    if (n < 20 || p[0] != 0x09 || p[9] != 0x10) return 0;            /* 1: wall_time (fixed64), 2: step */
    Cur c = {p + 10, p + n};
    if (!varint(&c, &step) || c.p == c.end || *c.p++ != 0x2a ||        /* 5: summary, to the end */
        !varint(&c, &len) || len != (uint64_t)(c.end - c.p)) return 0;
    if (c.p == c.end || *c.p++ != 0x0a || !varint(&c, &len) || len != (uint64_t)(c.end - c.p))  /* its one value */
        return 0;
    if (c.p == c.end || *c.p++ != 0x0a || !varint(&c, &len) || !len || len + 5 != (uint64_t)(c.end - c.p))
        return 0;                                                      /* the value: 1 tag, 2 simple_value */
    if (c.p[len] != 0x15) return 0;
    FastValue fv = {.tag = c.p, .tag_len = (size_t)len};
    float x;
    memcpy(&x, c.p + len + 1, 4);
    fv.value = x;
    if (!tag_ok(s, &fv)) return 0;   /* not UTF-8: decode_event() leaves it to the proto decoder */
    double wall;
    memcpy(&wall, p + 1, 8);
    return emit_value(s, &fv, offset, (int64_t)step, wall) < 0 ? -1 : 1;
}

/* Which part of an Event a record holds. */
enum { W_NONE, W_SUMMARY, W_GRAPH, W_RUN_METADATA, W_ALWAYS };

/* Decode one payload: 1 = taken into columns, 0 = hand to the proto decoder, 2 = drop, -1 out of memory,
   3 = a described lone histogram (want_other bit 8; *d filled in). */
static int decode_event(Scanner *s, const uint8_t *p, size_t n, int64_t offset, Described *d) {
    Cur c = {p, p + n}, summary = {NULL, NULL};
    uint64_t key, v;
    double wall = 0;
    int64_t step = 0;
    int what = W_NONE, nwhat = 0;
    while (c.p < c.end) {
        if (!field_key(&c, &key)) return 0;
        int f = (int)(key >> 3), wt = (int)(key & 7);
        switch (f) {
        case 1: if (wt != 1 || c.end - c.p < 8) return 0; memcpy(&wall, c.p, 8); c.p += 8; break;
        case 2: if (wt != 0 || !varint(&c, &v)) return 0; step = (int64_t)v; break;
        case 5: if (wt != 2 || !bytes_field(&c, &summary)) return 0; what = W_SUMMARY; nwhat++; break;
        case 4: case 9: what = W_GRAPH; nwhat++; if (!skip(&c, wt)) return 0; break;
        case 8: what = W_RUN_METADATA; nwhat++; if (!skip(&c, wt)) return 0; break;
        case 3: case 6: case 7: what = W_ALWAYS; nwhat++; if (!skip(&c, wt)) return 0; break;
        default: if (!skip(&c, wt)) return 0; break;
        }
    }
    if (nwhat != 1) return nwhat ? 0 : 2;
    if (what == W_GRAPH) return (s->want_other & 1) ? 0 : 2;
    if (what == W_RUN_METADATA) return (s->want_other & 2) ? 0 : 2;
    if (what != W_SUMMARY) return 0;

    /* pass 1: is every value fast? (the first few are kept, so that usually one pass does) */
    enum { KEEP = 8 };
    FastValue kept[KEEP];
    int nkept = 0, nfast = 0;
    Cur sc = summary, lone = {NULL, NULL};
    int all_fast = 1, nvalues = 0;
    while (sc.p < sc.end) {
        Cur vc;
        if (!field_key(&sc, &key)) return 0;
        if ((key >> 3) != 1 || (key & 7) != 2) { if (!skip(&sc, (int)(key & 7))) return 0; continue; }
        if (!bytes_field(&sc, &vc)) return 0;
        if (!nvalues++) lone = vc;
        FastValue spare;  /* decoded in place: copying a FastValue just written stalls on store forwarding */
        FastValue *fv = nkept < KEEP ? &kept[nkept] : &spare;
        int r = fast_value(vc, fv);
        if (r >= 0 && !tag_ok(s, fv)) r = -1;
        if (r < 0) all_fast = 0;
        else if (r > 0) {
            if (fv != &spare) nkept++;
            nfast++;
        }
    }
    if (!all_fast && (s->want_other & 4)) {
        const uint8_t *tag = NULL;
        size_t tag_len = 0;
        if ((s->want_other & 8) && nvalues == 1 && lone_histogram(lone, &tag, &tag_len)) {
            d->step = step; d->wall = wall;
            d->tag_pos = (Py_ssize_t)(tag - p); d->tag_len = (Py_ssize_t)tag_len;  /* from the payload, for now */
            return 3;
        }
        return 0;
    }
    if (!nfast) return all_fast ? 1 : 2;
    for (int i = 0; i < nkept; i++)
        if (emit_value(s, &kept[i], offset, step, wall) < 0) return -1;
    if (nfast == nkept) return 1;
    /* pass 2: the fast values beyond the first KEEP */
    sc = summary;
    int seen = 0;
    while (sc.p < sc.end) {
        Cur vc;
        field_key(&sc, &key);
        if ((key >> 3) != 1 || (key & 7) != 2) { skip(&sc, (int)(key & 7)); continue; }
        bytes_field(&sc, &vc);
        FastValue fv;
        int r = fast_value(vc, &fv);
        if (r > 0 && !tag_ok(s, &fv)) r = -1;
        if (r <= 0 || seen++ < KEEP) continue;
        if (emit_value(s, &fv, offset, step, wall) < 0) return -1;
    }
    return 1;
}

static const char BUSY[] = "Scanner.feed is running (in another thread, or accept() called back into the scanner)";

static PyObject *Scanner_feed(Scanner *s, PyObject *args) {
    Py_buffer buf;
    long long base;
    if (!s->others) { PyErr_SetString(PyExc_RuntimeError, "Scanner not initialised"); return NULL; }
    if (!PyArg_ParseTuple(args, "y*L", &buf, &base)) return NULL;
    if (s->busy) { PyBuffer_Release(&buf); PyErr_SetString(PyExc_RuntimeError, BUSY); return NULL; }
    const uint8_t *p = buf.buf;
    Py_ssize_t n = buf.len, pos = 0, first_new = s->ntags, records = s->records, nothers = PyList_GET_SIZE(s->others);
    int status = 0, oom = 0;
    long long length = 0;
    s->busy = 1;
    /* The record loop: no Python object is touched from here to Py_END_ALLOW_THREADS. */
    Py_BEGIN_ALLOW_THREADS
    while (1) {
        if (n - pos < 12) { length = 0; status = 0; break; }
        const uint8_t *h = p + pos;
        if (masked_crc(h, 8) != rd32(h + 8)) { status = 1; break; }
        uint64_t len = rd64(h), avail = (uint64_t)(n - pos - 12);  /* bytes after the header */
        if (len > avail || len + 4 > avail) {
            status = 0;
            length = len > (uint64_t)LLONG_MAX - 16 ? LLONG_MAX : (long long)(len + 16);
            break;
        }
        const uint8_t *payload = h + 12;
        if (s->check_crc && masked_crc(payload, len) != rd32(payload + len)) {
            status = 2; length = (long long)(len + 16); break;
        }
        s->records++;
        Described d;
        int r = simple_event(s, payload, (size_t)len, base + pos);
        if (r == 0) r = decode_event(s, payload, (size_t)len, base + pos, &d);
        if (r == 3) r = emit_histogram(s, payload + d.tag_pos, (size_t)d.tag_len, base + pos, d.step, d.wall);
        else if (r == 0) r = note_other(s, base + pos, pos + 12, (Py_ssize_t)len);
        if (r < 0) { oom = 1; break; }
        pos += (Py_ssize_t)len + 16;
    }
    for (Py_ssize_t i = 0; !oom && i < s->ntags; i++)   /* the histograms' payloads, before the chunk goes */
        if (copy_payloads(s, &s->tags[i].histos, p, base) < 0) oom = 1;
    Py_END_ALLOW_THREADS
    PyObject *result = oom ? PyErr_NoMemory() : Py_BuildValue("(inL)", status, pos, length);
    int ok = result && settle_chunk(s, p, base, first_new) == 0;  /* while the buffer is still held */
    if (!ok) {  /* a failed feed keeps nothing of its chunk: no rows, tags, records or others */
        if (!result) {  /* settle_chunk() cleans up after itself */
            s->npending = 0;
            for (Py_ssize_t i = 0; i < s->ntags; i++) drop_chunk(s, &s->tags[i]);
            forget_tags(s, first_new);
        }
        Py_CLEAR(result);
        s->records = records;
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (PyList_SetSlice(s->others, nothers, PyList_GET_SIZE(s->others), NULL) < 0) PyErr_Clear();
        PyErr_Restore(type, value, tb);
    }
    s->busy = 0;
    PyBuffer_Release(&buf);
    return result;
}

static PyObject *Scanner_take_others(Scanner *s, PyObject *Py_UNUSED(ignored)) {
    PyObject *out = s->others;
    if (!out) { PyErr_SetString(PyExc_RuntimeError, "Scanner not initialised"); return NULL; }
    s->others = PyList_New(0);
    if (!s->others) { s->others = out; return NULL; }
    return out;
}

/* Reduce the rows of one kind (0 scalars, 1 histograms) of every accepted tag, without the GIL (`busy` meanwhile);
   -1 with MemoryError set when out of memory. */
static int reduce_all(Scanner *s, int histos) {
    int oom = 0;
    s->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < s->ntags; i++) {
        Tag *t = &s->tags[i];
        if (t->verdict == TAG_ACCEPTED && reduce_rows(s, histos ? &t->histos : &t->scalars) < 0) oom = 1;
    }
    Py_END_ALLOW_THREADS
    s->busy = 0;
    if (oom) PyErr_NoMemory();
    return oom ? -1 : 0;
}

static PyObject *Scanner_columns(Scanner *s, PyObject *Py_UNUSED(ignored)) {
    if (s->busy) { PyErr_SetString(PyExc_RuntimeError, BUSY); return NULL; }
    if (reduce_all(s, 0) < 0) return NULL;
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < s->ntags; i++) {
        Tag *t = &s->tags[i];
        RowSet *rs = &t->scalars;
        if (t->verdict != TAG_ACCEPTED || !rs->n) continue;
        if (rs->rows) {  /* hand the rows over, or hand the same RowsBuffer again */
            RowsBuffer *rb = PyObject_New(RowsBuffer, &RowsBufferType);
            if (!rb) { Py_DECREF(out); return NULL; }
            Row *rows = PyMem_RawRealloc(rs->rows, (size_t)rs->n * sizeof(Row));  /* shrinks: cannot move far */
            rb->rows = rows ? rows : rs->rows;
            rb->n = rs->n;
            rs->rows = NULL; rs->cap = 0; rs->settled = rs->n; rs->filtering = 0; rs->settled_ext = rs->ext;
            Py_XSETREF(t->handed, (PyObject *)rb);
        }
        Extremes *e = &rs->ext;
        PyObject *extremes = e->has_extremes
            ? Py_BuildValue("(dLdLO)", e->vmin, (long long)e->vmin_step, e->vmax, (long long)e->vmax_step,
                            e->stepped_back ? Py_True : Py_False)
            : Py_BuildValue("(dLdLO)", NAN, -1LL, NAN, -1LL, e->stepped_back ? Py_True : Py_False);
        if (!extremes) { Py_DECREF(out); return NULL; }
        PyObject *item = Py_BuildValue("(OLOOOOdN)", t->name, (long long)t->meta_offset, t->meta ? t->meta : Py_None,
                                       t->handed, t->from_tensor ? Py_True : Py_False,
                                       rs->reduced ? Py_True : Py_False, t->min_wall, extremes);
        if (!item || PyList_Append(out, item) < 0) { Py_XDECREF(item); Py_DECREF(out); return NULL; }
        Py_DECREF(item);
    }
    return out;
}

/* take_histograms(): [(tag, reduced, min_wall_time, payloads, [(offset, start, end, step, wall_time), ...])], the
   described histograms of each accepted tag (reduced first; payloads[start:end] is each one's), which the scanner
   then forgets. The payloads are copied into each tag's bytes without the GIL. */
static PyObject *Scanner_take_histograms(Scanner *s, PyObject *Py_UNUSED(ignored)) {
    if (s->busy) { PyErr_SetString(PyExc_RuntimeError, BUSY); return NULL; }
    if (reduce_all(s, 1) < 0) return NULL;
    PyObject *out = PyList_New(0);
    char **dest = PyMem_RawCalloc((size_t)(s->ntags ? s->ntags : 1), sizeof(char *));
    if (!out || !dest) { Py_XDECREF(out); PyMem_RawFree(dest); return PyErr_NoMemory(); }
    for (Py_ssize_t i = 0; i < s->ntags; i++) {
        Tag *t = &s->tags[i];
        RowSet *rs = &t->histos;
        if (t->verdict != TAG_ACCEPTED || !rs->n) continue;
        Py_ssize_t total = 0;
        for (Py_ssize_t j = 0; j < rs->n; j++) total += (Py_ssize_t)*(size_t *)rs->rows[j].blob;
        PyObject *payloads = PyBytes_FromStringAndSize(NULL, total), *items = PyList_New(rs->n);
        if (!payloads || !items) { Py_XDECREF(payloads); Py_XDECREF(items); goto fail; }
        dest[i] = PyBytes_AS_STRING(payloads);
        for (Py_ssize_t j = 0, at = 0; j < rs->n; j++) {
            const Row *r = &rs->rows[j];
            Py_ssize_t len = (Py_ssize_t)*(size_t *)r->blob;
            PyObject *item = Py_BuildValue("(LnnLd)", (long long)r->offset, at, at + len, (long long)r->step, r->wall);
            if (!item) { Py_DECREF(payloads); Py_DECREF(items); goto fail; }
            PyList_SET_ITEM(items, j, item);
            at += len;
        }
        PyObject *entry = Py_BuildValue("(OOdNN)", t->name, rs->reduced ? Py_True : Py_False, t->min_wall, payloads, items);
        if (!entry || PyList_Append(out, entry) < 0) { Py_XDECREF(entry); goto fail; }
        Py_DECREF(entry);
    }
    s->busy = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < s->ntags; i++) {   /* the payloads into their bytes, and the rows forgotten */
        RowSet *rs = &s->tags[i].histos;
        for (Py_ssize_t j = 0, at = 0; dest[i] && j < rs->n; j++) {
            size_t len = *(size_t *)rs->rows[j].blob;
            memcpy(dest[i] + at, rs->rows[j].blob + sizeof(size_t), len);
            at += (Py_ssize_t)len;
        }
        Py_ssize_t keep = rs->keep;
        clear_rows(s, rs);
        rs->keep = keep;
    }
    Py_END_ALLOW_THREADS
    s->busy = 0;
    PyMem_RawFree(dest);
    return out;
fail:
    Py_DECREF(out);
    PyMem_RawFree(dest);
    return NULL;
}

static PyObject *Scanner_get_held_bytes(Scanner *s, void *Py_UNUSED(c)) {
    Py_ssize_t n = 0;
    for (Py_ssize_t i = 0; i < s->ntags; i++) n += s->tags[i].scalars.n + s->tags[i].histos.n;
    return PyLong_FromSsize_t(n * (Py_ssize_t)sizeof(Row) + s->blob_bytes);
}

static void Scanner_clear_tags(Scanner *s) {
    forget_tags(s, 0);
    PyMem_RawFree(s->tags);
    PyMem_RawFree(s->slots);
    PyMem_RawFree(s->pending);
    s->tags = NULL; s->slots = NULL; s->pending = NULL;
    s->ntags = s->tags_cap = s->nslots = s->npending = s->pending_cap = s->blob_bytes = 0;
    s->last = -1;
}

static int Scanner_init(Scanner *s, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"accept", "want_other", "check_crc", "keep", NULL};
    PyObject *accept = Py_None, *keep = Py_None;
    int want_other = 7, check_crc = 1;
    if (s->busy) { PyErr_SetString(PyExc_RuntimeError, BUSY); return -1; }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OipO", kwlist, &accept, &want_other, &check_crc, &keep))
        return -1;
    Py_INCREF(accept);
    Py_XSETREF(s->accept, accept);
    Py_INCREF(keep);
    Py_XSETREF(s->keep, keep);
    s->want_other = want_other;
    s->check_crc = check_crc;
    Py_XSETREF(s->others, PyList_New(0));
    if (!s->others) return -1;
    Scanner_clear_tags(s);
    s->records = 0;
    return 0;
}

static void Scanner_dealloc(Scanner *s) {
    Scanner_clear_tags(s);
    Py_XDECREF(s->accept);
    Py_XDECREF(s->keep);
    Py_XDECREF(s->others);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *Scanner_get_records(Scanner *s, void *Py_UNUSED(c)) { return PyLong_FromSsize_t(s->records); }

static PyMethodDef Scanner_methods[] = {
    {"feed", (PyCFunction)Scanner_feed, METH_VARARGS, "feed(buf, base) -> (status, used, length)"},
    {"take_others", (PyCFunction)Scanner_take_others, METH_NOARGS, "records left to the proto decoder"},
    {"columns", (PyCFunction)Scanner_columns, METH_NOARGS, "per-tag scalar columns"},
    {"take_histograms", (PyCFunction)Scanner_take_histograms, METH_NOARGS, "per-tag described histograms"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Scanner_getset[] = {
    {"records", (getter)Scanner_get_records, NULL, "records framed so far", NULL},
    {"held_bytes", (getter)Scanner_get_held_bytes, NULL, "bytes of rows and histogram payloads held", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject ScannerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "tfevents.summaries._fastscan.Scanner",
    .tp_basicsize = sizeof(Scanner),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Scanner_init,
    .tp_dealloc = (destructor)Scanner_dealloc,
    .tp_methods = Scanner_methods,
    .tp_getset = Scanner_getset,
    .tp_doc = "Frames records, checks CRCs and decodes scalar summaries into per-tag columns.",
};

static PyObject *fs_masked_crc32c(PyObject *self, PyObject *arg) {
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    uint32_t c = masked_crc(b.buf, (size_t)b.len);
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLong(c);
}

/* lone_histogram_row(payload) -> (min, max, num, sum, sum_squares, bucket_limit bytes, bucket bytes) | None:
   the HistogramProto of an event the scanner described as a lone histogram, as decode.histo_row gives it (float64
   bytes of the packed fields), read straight from the wire; None for any other layout (a packed field in pieces,
   say), which the caller decodes with the proto. */
static PyObject *fs_lone_histogram_row(PyObject *self, PyObject *arg) {
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    Cur c = {b.buf, (const uint8_t *)b.buf + b.len}, summary = {NULL, NULL}, value = {NULL, NULL}, h = {NULL, NULL};
    uint64_t key;
    int ok = 1;
    while (ok && c.p < c.end) {   /* the event's summary */
        ok = field_key(&c, &key);
        if (ok && key == ((5 << 3) | 2)) ok = bytes_field(&c, &summary);
        else if (ok) ok = skip(&c, (int)(key & 7));
    }
    while (ok && summary.p && summary.p < summary.end) {   /* its first value */
        ok = field_key(&summary, &key);
        if (ok && key == ((1 << 3) | 2) && !value.p) ok = bytes_field(&summary, &value);
        else if (ok) ok = skip(&summary, (int)(key & 7));
    }
    while (ok && value.p && value.p < value.end) {   /* the value's histo */
        ok = field_key(&value, &key);
        if (ok && key == ((5 << 3) | 2)) ok = bytes_field(&value, &h);
        else if (ok) ok = skip(&value, (int)(key & 7));
    }
    double d[5] = {0, 0, 0, 0, 0};
    Cur packed[2] = {{NULL, NULL}, {NULL, NULL}};
    ok = ok && h.p && histo_ok(h);
    while (ok && h.p < h.end) {
        field_key(&h, &key);
        int f = (int)(key >> 3);
        if (f <= 5) { memcpy(&d[f - 1], h.p, 8); h.p += 8; }
        else if (packed[f - 6].p) ok = 0;   /* in pieces: left to the proto */
        else bytes_field(&h, &packed[f - 6]);
    }
    PyObject *out = ok ? Py_BuildValue("(dddddy#y#)", d[0], d[1], d[2], d[3], d[4],
                                       (const char *)packed[0].p, packed[0].p ? (Py_ssize_t)(packed[0].end - packed[0].p) : 0,
                                       (const char *)packed[1].p, packed[1].p ? (Py_ssize_t)(packed[1].end - packed[1].p) : 0)
                       : (Py_INCREF(Py_None), Py_None);
    PyBuffer_Release(&b);
    return out;
}

/* compact_lone_histogram(payload, edges) -> (min, max, first, k, nonzero indices, counts, counts_are_float32) | None:
   a described lone histogram in live/packing.py's CompactHistogram form when its bucket limits are the float64
   table `edges` (bytes) from index `first` on, byte for byte (what the writers write), k of them; nonzero: the indices of
   the non-zero counts (uint16 bytes, uint32 from 65,536 buckets), counts: those counts, as float32 bytes when
   every one converts back to the same float64 bits, else float64 bytes. None for anything else (the caller
   compacts it in Python). */
static PyObject *fs_compact_lone_histogram(PyObject *self, PyObject *args) {
    PyObject *payload;
    Py_buffer e;
    if (!PyArg_ParseTuple(args, "Oy*", &payload, &e)) return NULL;
    PyObject *out = NULL, *row = fs_lone_histogram_row(self, payload);   /* (it takes the payload's buffer) */
    if (!row || row == Py_None) { out = row; goto done; }
    const char *limits = PyBytes_AS_STRING(PyTuple_GET_ITEM(row, 5)), *counts = PyBytes_AS_STRING(PyTuple_GET_ITEM(row, 6));
    Py_ssize_t k = PyBytes_GET_SIZE(PyTuple_GET_ITEM(row, 5)) / 8, nedges = e.len / 8;
    const double *table = e.buf;
    if (k == 0 || PyBytes_GET_SIZE(PyTuple_GET_ITEM(row, 6)) != 8 * k) { Py_INCREF(Py_None); out = Py_None; goto done; }
    double first_limit;
    memcpy(&first_limit, limits, 8);
    Py_ssize_t lo = 0, hi = nedges;   /* the first edge >= the first limit */
    while (lo < hi) { Py_ssize_t mid = lo + (hi - lo) / 2; if (table[mid] < first_limit) lo = mid + 1; else hi = mid; }
    if (lo + k > nedges || memcmp(table + lo, limits, (size_t)(8 * k)) != 0) { Py_INCREF(Py_None); out = Py_None; goto done; }
    int wide = k >= 65536, narrow32 = 1;
    Py_ssize_t nz = 0;
    for (Py_ssize_t i = 0; i < k; i++) {
        double c; memcpy(&c, counts + 8 * i, 8);
        if (c != 0) nz++;
    }
    PyObject *idx = PyBytes_FromStringAndSize(NULL, nz * (wide ? 4 : 2));
    PyObject *vals64 = idx ? PyBytes_FromStringAndSize(NULL, nz * 8) : NULL;
    if (!vals64) { Py_XDECREF(idx); goto done; }
    char *ip = PyBytes_AS_STRING(idx);
    double *vp = (double *)PyBytes_AS_STRING(vals64);
    for (Py_ssize_t i = 0, j = 0; i < k; i++) {
        double c; memcpy(&c, counts + 8 * i, 8);
        if (c == 0) continue;
        if (wide) { uint32_t x = (uint32_t)i; memcpy(ip + 4 * j, &x, 4); }
        else { uint16_t x = (uint16_t)i; memcpy(ip + 2 * j, &x, 2); }
        double back = (double)(float)c;
        narrow32 &= memcmp(&back, &c, 8) == 0;
        vp[j++] = c;
    }
    PyObject *vals = vals64;
    if (narrow32) {
        vals = PyBytes_FromStringAndSize(NULL, nz * 4);
        if (!vals) { Py_DECREF(idx); Py_DECREF(vals64); goto done; }
        float *fp = (float *)PyBytes_AS_STRING(vals);
        for (Py_ssize_t j = 0; j < nz; j++) fp[j] = (float)vp[j];
        Py_DECREF(vals64);
    }
    out = Py_BuildValue("(OOnnNNO)", PyTuple_GET_ITEM(row, 0), PyTuple_GET_ITEM(row, 1), lo, k, idx, vals,
                        narrow32 ? Py_True : Py_False);
done:
    Py_XDECREF(row);
    PyBuffer_Release(&e);
    return out;
}

/* narrow_ints(a) -> None | (size, small, where, wide): live/packing.py's narrow_ints of a non-empty 1-d C-contiguous
   int64 buffer in two passes: the first prices int8, int16 and int32 (itemsize * n + 12 for each entry outside the
   type: an entry x is outside [t_min, t_max] when (x - t_min) taken modulo 2**64 exceeds t_max - t_min), the
   second writes the cheapest (the narrower on a tie; None when none costs less than int64's 8 * n): `small`
   (bytearray of n little-endian ints of `size` bytes, 0 where an entry does not fit), `where` (bytearray of int32
   indices of those entries) and `wide` (bytearray of their int64 values), both None when every entry fits. */
static PyObject *fs_narrow_ints(PyObject *self, PyObject *arg) {
    Py_buffer v;
    if (PyObject_GetBuffer(arg, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) return NULL;
    const char *f = v.format ? v.format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    if (v.itemsize != 8 || (f[0] != 'q' && f[0] != 'l') || f[1] != '\0' || v.len == 0 || v.len / 8 > INT32_MAX) {
        PyBuffer_Release(&v);
        PyErr_SetString(PyExc_TypeError, "narrow_ints takes a non-empty 1-d int64 buffer");
        return NULL;
    }
    const int64_t *a = (const int64_t *)v.buf;
    Py_ssize_t n = v.len / 8, outside[3] = {0, 0, 0};
    static const uint64_t shift[3] = {128u, 32768u, 2147483648u}, span[3] = {255u, 65535u, 4294967295u};
    static const int size[3] = {1, 2, 4};
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t u = (uint64_t)a[i];
        outside[0] += u + shift[0] > span[0];
        outside[1] += u + shift[1] > span[1];
        outside[2] += u + shift[2] > span[2];
    }
    int best = -1;
    Py_ssize_t best_cost = 8 * n;
    for (int t = 0; t < 3; t++) {
        Py_ssize_t cost = size[t] * n + 12 * outside[t];
        if (cost < best_cost) {
            best = t;
            best_cost = cost;
        }
    }
    if (best < 0) {
        PyBuffer_Release(&v);
        Py_RETURN_NONE;
    }
    Py_ssize_t k = outside[best];
    PyObject *small = PyByteArray_FromStringAndSize(NULL, size[best] * n);
    PyObject *where = k ? PyByteArray_FromStringAndSize(NULL, 4 * k) : (Py_INCREF(Py_None), Py_None);
    PyObject *wide = k ? PyByteArray_FromStringAndSize(NULL, 8 * k) : (Py_INCREF(Py_None), Py_None);
    if (small == NULL || where == NULL || wide == NULL) {
        Py_XDECREF(small);
        Py_XDECREF(where);
        Py_XDECREF(wide);
        PyBuffer_Release(&v);
        return NULL;
    }
    char *out = PyByteArray_AS_STRING(small);
    int32_t *at = k ? (int32_t *)PyByteArray_AS_STRING(where) : NULL;
    char *values = k ? PyByteArray_AS_STRING(wide) : NULL;
    Py_ssize_t j = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t x = a[i];
        if ((uint64_t)x + shift[best] > span[best]) {
            at[j] = (int32_t)i;
            memcpy(values + 8 * j, &x, 8);
            j++;
            x = 0;
        }
        if (best == 0) {
            int8_t y = (int8_t)x;
            memcpy(out + i, &y, 1);
        } else if (best == 1) {
            int16_t y = (int16_t)x;
            memcpy(out + 2 * i, &y, 2);
        } else {
            int32_t y = (int32_t)x;
            memcpy(out + 4 * i, &y, 4);
        }
    }
    PyBuffer_Release(&v);
    return Py_BuildValue("iNNN", size[best], small, where, wide);
}

static PyMethodDef module_methods[] = {
    {"narrow_ints", fs_narrow_ints, METH_O, "an int64 buffer in the fewest bytes (live/packing.py), or None"},
    {"masked_crc32c", fs_masked_crc32c, METH_O, "masked CRC32C of a bytes-like object (for tests)"},
    {"lone_histogram_row", fs_lone_histogram_row, METH_O, "a described lone histogram's histo_row, or None"},
    {"compact_lone_histogram", fs_compact_lone_histogram, METH_VARARGS, "a lone histogram's compact form, or None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_fastscan", NULL, -1, module_methods};

PyMODINIT_FUNC PyInit__fastscan(void) {
    crc_init();
#ifdef HAVE_CRC_HW
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) crc32c = crc_hw;
#endif
    if (PyType_Ready(&ScannerType) < 0 || PyType_Ready(&RowsBufferType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    Py_INCREF(&ScannerType);
    if (PyModule_AddObject(m, "Scanner", (PyObject *)&ScannerType) < 0) { Py_DECREF(&ScannerType); Py_DECREF(m); return NULL; }
    PyModule_AddIntConstant(m, "hardware_crc", crc32c != crc_sw);
    return m;
}
