/* Scalar fast path of the offline reader: frames TFRecords, checks both CRC32C checksums and
 * decodes scalar summaries straight from the protobuf wire format into per-tag columns.
 *
 *   Scanner(accept, want_other, check_crc)
 *     accept(tag: str) -> bool   called once per new tag; rows of refused tags are dropped
 *     want_other: bit 1 graphs, bit 2 run metadata, bit 4 non-scalar summaries,
 *                 bit 8 described histograms (see take_others)
 *   Scanner.feed(buf, base) -> (status, used, length)
 *     frames the complete records of buf (buf[0] is at file offset base) and stops at
 *     status 0: an incomplete record at buf[used:] (length = its full size if its header is whole)
 *     status 1: a bad length checksum at buf[used]
 *     status 2: a bad payload checksum at buf[used] (length = its full size)
 *   Scanner.take_others() -> [(offset, payload bytes)]  records left to the proto-based decoder:
 *     file_version, session_log, anything not a pure scalar summary, unparseable payloads;
 *     with want_other bit 8, an event whose summary is one value of a tag (valid UTF-8) and a HistogramProto of
 *     the usual layout, nothing else, comes as (offset, payload bytes, step, wall_time, tag): the caller may
 *     leave the histogram undecoded until it needs it (the live loader decodes only the ones it keeps)
 *   Scanner.columns() -> [(tag, meta_offset, meta bytes | None, offsets, steps, wall_times, values, from_tensor)]
 *     columns are bytearrays of int64 / int64 / float64 / float64;
 *     from_tensor: some rows were tensors
 *   Scanner.records  number of framed records
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

/* ------------------------------------------------------------------ per-tag columns
 *
 * feed() runs its record loop without the GIL, so nothing the loop touches is a Python object.
 * The loop works in raw C memory (PyMem_Raw*, which needs no GIL): it stages each tag's new rows
 * and first metadata there, creates tags it has not seen (their verdict pending), and notes the
 * records left to the proto decoder as positions in the caller's buffer. After the loop, with the
 * GIL back, feed() settles the chunk: the noted records become (offset, bytes) while it still
 * holds the buffer; each new tag gets its Python name and its accept() verdict (a refused tag's
 * staged rows are dropped); and the staged rows of accepted tags are appended to their bytearray
 * columns. (Appending per chunk, from staging arrays that stay allocated, costs one copy of the
 * rows out of cache; building the columns only in columns() would cost a copy of every row into
 * fresh memory plus that memory at the peak.)
 */

enum { TAG_REFUSED, TAG_ACCEPTED, TAG_PENDING };  /* Tag.verdict: PENDING until feed() asks accept() */

typedef struct {
    uint8_t *key; size_t key_len; uint64_t hash;   /* the tag's UTF-8 bytes */
    Py_ssize_t next;                /* the tag whose value came right after this one's last time (-1: none) */
    int verdict, from_tensor;
    PyObject *name;                 /* str; NULL while the verdict is pending */
    PyObject *meta;                 /* bytes: the tag's first SummaryMetadata (NULL: none, or still staged) */
    int64_t meta_offset;            /* the offset of its record (-1: none seen yet) */
    uint8_t *staged_meta; size_t staged_meta_len;  /* the first metadata, found by this chunk's loop */
    PyObject *cols[4];              /* bytearrays: int64 offsets, int64 steps, double wall_times, double values */
    Py_ssize_t n;                   /* rows in cols */
    void *stage[4];                 /* raw: this chunk's rows, in the same layout */
    Py_ssize_t staged, stage_cap;
} Tag;

/* A record for the proto decoder, noted during the loop: its payload is buf[pos:pos + len]. */
typedef struct {
    int64_t offset; Py_ssize_t pos, len;
    int described; int64_t step; double wall; Py_ssize_t tag_pos, tag_len;  /* described: a lone histogram */
} Other;

typedef struct {
    PyObject_HEAD
    PyObject *accept;
    int want_other, check_crc;
    int busy;                       /* a feed() is running: the tags are not to be read or changed */
    PyObject *others;               /* list of (offset, bytes) */
    Other *pending; Py_ssize_t npending, pending_cap;  /* this chunk's records for the proto decoder */
    Tag *tags; Py_ssize_t ntags, tags_cap;
    Py_ssize_t *slots; Py_ssize_t nslots; /* open addressing: index+1 into tags, 0 empty */
    Py_ssize_t last;                /* last tag hit */
    Py_ssize_t records;
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
    Py_ssize_t idx = s->ntags++;
    insert_slot(s, idx);
    return hit(s, idx);
}

/* With the GIL: drop the rows and metadata staged by this chunk's loop (and the bytes made of the
   metadata by a reserve_staged() whose chunk then failed). */
static void drop_staged(Tag *t) {
    t->staged = 0;
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
        for (int k = 0; k < 4; k++) { Py_CLEAR(t->cols[k]); PyMem_RawFree(t->stage[k]); }
        PyMem_RawFree(t->staged_meta);
        PyMem_RawFree(t->key);
        Py_CLEAR(t->name);
        Py_CLEAR(t->meta);
    }
    if (first >= s->ntags) return;
    s->ntags = first;
    s->last = -1;
    memset(s->slots, 0, (size_t)s->nslots * sizeof(Py_ssize_t));
    for (Py_ssize_t i = 0; i < s->ntags; i++) insert_slot(s, i);
}

/* With the GIL, after the loop: name each tag first seen in it and ask accept() about it, in the
   order first seen (the order in which accept() used to be asked, on first sight). A refused
   tag's staged rows are dropped. On error the tags not yet settled are forgotten. */
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
        if (!accepted) {  /* its rows are never wanted: free the staging arrays too */
            drop_staged(t);
            for (int k = 0; k < 4; k++) { PyMem_RawFree(t->stage[k]); t->stage[k] = NULL; }
            t->stage_cap = 0;
            t->from_tensor = 0;
        }
    }
    return 0;
}

/* With the GIL: make room in an accepted tag's columns for its staged rows, and the bytes of its
   staged metadata. May fail; nothing is committed until commit_staged(). */
static int reserve_staged(Tag *t) {
    if (t->staged_meta && !t->meta) {
        t->meta = PyBytes_FromStringAndSize((const char *)t->staged_meta, (Py_ssize_t)t->staged_meta_len);
        if (!t->meta) return -1;
    }
    if (!t->staged) return 0;
    if (t->n > (PY_SSIZE_T_MAX / 8) - t->staged) { PyErr_NoMemory(); return -1; }
    Py_ssize_t size = (t->n + t->staged) * 8;  /* exact: bytearrays over-allocate as they grow */
    for (int k = 0; k < 4; k++) {
        if (!t->cols[k]) {
            if (!(t->cols[k] = PyByteArray_FromStringAndSize(NULL, size))) return -1;
        } else if (PyByteArray_Resize(t->cols[k], size) < 0) {
            return -1;  /* columns() trims the ones already grown back to n rows */
        }
    }
    return 0;
}

/* After reserve_staged(): append the staged rows to the columns (cannot fail). */
static void commit_staged(Tag *t) {
    PyMem_RawFree(t->staged_meta);
    t->staged_meta = NULL; t->staged_meta_len = 0;
    for (int k = 0; k < 4; k++)
        memcpy(PyByteArray_AS_STRING(t->cols[k]) + t->n * 8, t->stage[k], (size_t)t->staged * 8);
    t->n += t->staged;
    t->staged = 0;
}

static int stage_row(Tag *t, int64_t offset, int64_t step, double wall, double value) {
    if (t->staged == t->stage_cap) {
        if (t->stage_cap > PY_SSIZE_T_MAX / 16) return -1;
        Py_ssize_t cap = t->stage_cap ? t->stage_cap * 2 : 16;  /* small: every tag keeps its staging arrays */
        for (int k = 0; k < 4; k++) {
            void *col = PyMem_RawRealloc(t->stage[k], (size_t)cap * 8);
            if (!col) return -1;  /* the arrays grown so far keep their rows; stage_cap stays the old one */
            t->stage[k] = col;
        }
        t->stage_cap = cap;
    }
    Py_ssize_t i = t->staged++;
    ((int64_t *)t->stage[0])[i] = offset;
    ((int64_t *)t->stage[1])[i] = step;
    ((double *)t->stage[2])[i] = wall;
    ((double *)t->stage[3])[i] = value;
    return 0;
}

/* Stage one fast value for its tag (unless the tag is refused); -1 when out of memory.
   Rows of a tag whose verdict is pending are staged too, until feed() asks accept(). No GIL needed. */
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
    t->from_tensor |= fv->is_tensor;
    return stage_row(t, offset, step, wall, fv->value);
}

/* Note a record for the proto decoder (payload at buf[pos:pos + len]); -1 when out of memory. No GIL needed. */
static int note_other(Scanner *s, int64_t offset, Py_ssize_t pos, Py_ssize_t len, const Other *described) {
    if (s->npending == s->pending_cap) {
        Py_ssize_t cap = s->pending_cap ? s->pending_cap * 2 : 64;
        Other *pending = PyMem_RawRealloc(s->pending, (size_t)cap * sizeof(Other));
        if (!pending) return -1;
        s->pending = pending;
        s->pending_cap = cap;
    }
    if (described) s->pending[s->npending] = *described;
    else s->pending[s->npending] = (Other){.offset = offset, .pos = pos, .len = len};
    s->npending++;
    return 0;
}

/* With the GIL, after the loop: settle the chunk (see the top of this section). */
static int settle_chunk(Scanner *s, const uint8_t *buf, Py_ssize_t first_new) {
    int ok = 1;
    for (Py_ssize_t i = 0; ok && i < s->npending; i++) {
        const Other *o = &s->pending[i];
        PyObject *item;
        if (o->described) {
            PyObject *tag = PyUnicode_DecodeUTF8((const char *)buf + o->tag_pos, o->tag_len, "strict");
            item = tag ? Py_BuildValue("(Ly#LdN)", (long long)o->offset, (const char *)buf + o->pos, o->len,
                                       (long long)o->step, o->wall, tag) : NULL;
        } else {
            item = Py_BuildValue("(Ly#)", (long long)o->offset, (const char *)buf + o->pos, o->len);
        }
        ok = item && PyList_Append(s->others, item) == 0;
        Py_XDECREF(item);
    }
    s->npending = 0;
    if (ok) ok = settle_tags(s, first_new) == 0;
    for (Py_ssize_t i = 0; ok && i < s->ntags; i++)  /* first everything that may fail, */
        if (s->tags[i].verdict == TAG_ACCEPTED) ok = reserve_staged(&s->tags[i]) == 0;
    for (Py_ssize_t i = 0; i < s->ntags; i++) {      /* then commit, or leave no trace of the chunk */
        if (!ok) drop_staged(&s->tags[i]);
        else if (s->tags[i].verdict == TAG_ACCEPTED) commit_staged(&s->tags[i]);
    }
    if (!ok) forget_tags(s, first_new);
    return ok ? 0 : -1;
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

/* Which part of an Event a record holds. */
enum { W_NONE, W_SUMMARY, W_GRAPH, W_RUN_METADATA, W_ALWAYS };

/* Decode one payload: 1 = taken into columns, 0 = hand to the proto decoder, 2 = drop, -1 out of memory,
   3 = a described lone histogram (want_other bit 8; *d filled in but for the positions). */
static int decode_event(Scanner *s, const uint8_t *p, size_t n, int64_t offset, Other *d) {
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
        FastValue fv;
        int r = fast_value(vc, &fv);
        if (r >= 0 && !tag_ok(s, &fv)) r = -1;
        if (r < 0) all_fast = 0;
        else if (r > 0) {
            if (nkept < KEEP) kept[nkept++] = fv;
            nfast++;
        }
    }
    if (!all_fast && (s->want_other & 4)) {
        const uint8_t *tag;
        size_t tag_len;
        if ((s->want_other & 8) && nvalues == 1 && lone_histogram(lone, &tag, &tag_len)) {
            d->described = 1; d->step = step; d->wall = wall;
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
        Other d;
        int r = decode_event(s, payload, (size_t)len, base + pos, &d);
        if (r == 3) {
            d.offset = base + pos; d.pos = pos + 12; d.len = (Py_ssize_t)len; d.tag_pos += pos + 12;
            r = note_other(s, base + pos, pos + 12, (Py_ssize_t)len, &d);
        } else if (r == 0) r = note_other(s, base + pos, pos + 12, (Py_ssize_t)len, NULL);
        if (r < 0) { oom = 1; break; }
        pos += (Py_ssize_t)len + 16;
    }
    Py_END_ALLOW_THREADS
    PyObject *result = oom ? PyErr_NoMemory() : Py_BuildValue("(inL)", status, pos, length);
    int ok = result && settle_chunk(s, p, first_new) == 0;  /* while the buffer is still held */
    if (!ok) {  /* a failed feed keeps nothing of its chunk: no rows, tags, records or others */
        if (!result) {  /* settle_chunk() cleans up after itself */
            s->npending = 0;
            for (Py_ssize_t i = 0; i < s->ntags; i++) drop_staged(&s->tags[i]);
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

static PyObject *Scanner_columns(Scanner *s, PyObject *Py_UNUSED(ignored)) {
    if (s->busy) { PyErr_SetString(PyExc_RuntimeError, BUSY); return NULL; }
    PyObject *out = PyList_New(0);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; i < s->ntags; i++) {
        Tag *t = &s->tags[i];
        if (t->verdict != TAG_ACCEPTED || !t->n) continue;
        for (int k = 0; k < 4; k++)  /* n rows each (a no-op unless a failed feed left one longer) */
            if (PyByteArray_GET_SIZE(t->cols[k]) != t->n * 8 && PyByteArray_Resize(t->cols[k], t->n * 8) < 0) {
                Py_DECREF(out);
                return NULL;
            }
        PyObject *item = Py_BuildValue("(OLOOOOOO)", t->name, (long long)t->meta_offset, t->meta ? t->meta : Py_None,
                                       t->cols[0], t->cols[1], t->cols[2], t->cols[3], t->from_tensor ? Py_True : Py_False);
        if (!item || PyList_Append(out, item) < 0) { Py_XDECREF(item); Py_DECREF(out); return NULL; }
        Py_DECREF(item);
    }
    return out;
}

static void Scanner_clear_tags(Scanner *s) {
    forget_tags(s, 0);
    PyMem_RawFree(s->tags);
    PyMem_RawFree(s->slots);
    PyMem_RawFree(s->pending);
    s->tags = NULL; s->slots = NULL; s->pending = NULL;
    s->ntags = s->tags_cap = s->nslots = s->npending = s->pending_cap = 0;
    s->last = -1;
}

static int Scanner_init(Scanner *s, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"accept", "want_other", "check_crc", NULL};
    PyObject *accept = Py_None;
    int want_other = 7, check_crc = 1;
    if (s->busy) { PyErr_SetString(PyExc_RuntimeError, BUSY); return -1; }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|Oip", kwlist, &accept, &want_other, &check_crc)) return -1;
    Py_INCREF(accept);
    Py_XSETREF(s->accept, accept);
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
    Py_XDECREF(s->others);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *Scanner_get_records(Scanner *s, void *Py_UNUSED(c)) { return PyLong_FromSsize_t(s->records); }

static PyMethodDef Scanner_methods[] = {
    {"feed", (PyCFunction)Scanner_feed, METH_VARARGS, "feed(buf, base) -> (status, used, length)"},
    {"take_others", (PyCFunction)Scanner_take_others, METH_NOARGS, "records left to the proto decoder"},
    {"columns", (PyCFunction)Scanner_columns, METH_NOARGS, "per-tag scalar columns"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef Scanner_getset[] = {
    {"records", (getter)Scanner_get_records, NULL, "records framed so far", NULL},
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

static PyMethodDef module_methods[] = {
    {"masked_crc32c", fs_masked_crc32c, METH_O, "masked CRC32C of a bytes-like object (for tests)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_fastscan", NULL, -1, module_methods};

PyMODINIT_FUNC PyInit__fastscan(void) {
    crc_init();
#ifdef HAVE_CRC_HW
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse4.2")) crc32c = crc_hw;
#endif
    if (PyType_Ready(&ScannerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    Py_INCREF(&ScannerType);
    if (PyModule_AddObject(m, "Scanner", (PyObject *)&ScannerType) < 0) { Py_DECREF(&ScannerType); Py_DECREF(m); return NULL; }
    PyModule_AddIntConstant(m, "hardware_crc", crc32c != crc_sw);
    return m;
}
