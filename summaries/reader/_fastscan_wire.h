/* The wire-level pieces of _fastscan.c: CRC32C (table-driven, or SSE4.2 when the CPU has it), the
 * protobuf wire format (varints, keys, length-delimited fields), and the decoding of one Summary.Value
 * into a scalar when it is a simple_value or a rank-0 numeric tensor (fast_value). Pure C: no Python
 * API, so feed() can run these without the GIL. Included once, by _fastscan.c. */
#ifndef TFEVENTS_FASTSCAN_WIRE_H
#define TFEVENTS_FASTSCAN_WIRE_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <limits.h>

/* ------------------------------------------------------------------ CRC32C (Castagnoli) */

static uint32_t crc_table[8][256];

static void crc_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
}

static uint32_t crc_sw(const uint8_t *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= c;
        c = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^ crc_table[5][(w >> 16) & 0xff] ^
            crc_table[4][(w >> 24) & 0xff] ^ crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
            crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
        p += 8;
        n -= 8;
    }
    while (n--) c = (c >> 8) ^ crc_table[0][(c ^ *p++) & 0xff];
    return c ^ 0xFFFFFFFFu;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("sse4.2"))) static uint32_t crc_hw(const uint8_t *p, size_t n) {
    uint64_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8;
        n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32 ^ 0xFFFFFFFFu;
}
#define HAVE_CRC_HW 1
#endif

static uint32_t (*crc32c)(const uint8_t *, size_t) = crc_sw;

static inline uint32_t masked_crc(const uint8_t *p, size_t n) {
    uint32_t c = crc32c(p, n);
    return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

static inline uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

/* ------------------------------------------------------------------ protobuf wire format */

typedef struct { const uint8_t *p, *end; } Cur;

static inline int varint(Cur *c, uint64_t *out) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && c->p < c->end; shift += 7) {
        uint8_t b = *c->p++;
        if (shift == 63 && b > 1) return 0;   /* more than 64 bits: protobuf rejects it too */
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) { *out = v; return 1; }
    }
    return 0;
}

/* A field key: field number 0 or a key beyond 32 bits is malformed for protobuf, so here too. */
static inline int field_key(Cur *c, uint64_t *key) {
    return varint(c, key) && (*key >> 3) != 0 && *key <= 0xFFFFFFFFu;
}

/* Skip a field of wire type wt; 0 on malformed input. */
static inline int skip(Cur *c, int wt) {
    uint64_t v;
    switch (wt) {
    case 0: return varint(c, &v);
    case 1: if (c->end - c->p < 8) return 0; c->p += 8; return 1;
    case 2: if (!varint(c, &v) || (uint64_t)(c->end - c->p) < v) return 0; c->p += v; return 1;
    case 5: if (c->end - c->p < 4) return 0; c->p += 4; return 1;
    default: return 0;
    }
}

static inline int bytes_field(Cur *c, Cur *sub) {
    uint64_t n;
    if (!varint(c, &n) || (uint64_t)(c->end - c->p) < n) return 0;
    sub->p = c->p;
    sub->end = c->p + n;
    c->p += n;
    return 1;
}

static double half_to_double(uint16_t h) {
    int sign = h >> 15, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v;
    if (exp == 0) v = ldexp((double)mant, -24);
    else if (exp == 31) v = mant ? NAN : INFINITY;
    else v = ldexp((double)(mant | 0x400), exp - 25);
    return sign ? -v : v;
}

enum { DT_FLOAT = 1, DT_DOUBLE = 2, DT_INT32 = 3, DT_INT64 = 9, DT_HALF = 19 };

/* A rank-0 numeric TensorProto -> *out. 0 if it is anything else. */
static int scalar_tensor(Cur t, double *out) {
    uint64_t key, dtype = 0, v;
    int nvals = 0;
    double val = 0;
    const uint8_t *content = NULL;
    size_t content_len = 0;
    int fields_seen = 0; /* which value field held the values */
    while (t.p < t.end) {
        if (!field_key(&t, &key)) return 0;
        int f = (int)(key >> 3), wt = (int)(key & 7);
        Cur s;
        switch (f) {
        case 1: if (wt != 0 || !varint(&t, &dtype)) return 0; break;
        case 2: /* shape: rank 0 only, i.e. no dim and no unknown_rank */
            if (wt != 2 || !bytes_field(&t, &s)) return 0;
            if (s.p != s.end) {
                while (s.p < s.end) {
                    if (!field_key(&s, &key)) return 0;
                    if ((key >> 3) == 2 || (key >> 3) == 3) return 0;
                    if (!skip(&s, (int)(key & 7))) return 0;
                }
            }
            break;
        case 3: if (!skip(&t, wt)) return 0; break; /* version_number */
        case 4: if (wt != 2 || !bytes_field(&t, &s)) return 0; content = s.p; content_len = (size_t)(s.end - s.p); break;
        case 5: /* float_val */
            fields_seen |= 1 << 5;
            if (wt == 5) { if (t.end - t.p < 4) return 0; float x; memcpy(&x, t.p, 4); t.p += 4; val = x; nvals++; }
            else if (wt == 2) {
                if (!bytes_field(&t, &s) || (s.end - s.p) % 4) return 0;
                for (; s.p < s.end; s.p += 4) { float x; memcpy(&x, s.p, 4); val = x; nvals++; }
            } else return 0;
            break;
        case 6: /* double_val */
            fields_seen |= 1 << 6;
            if (wt == 1) { if (t.end - t.p < 8) return 0; memcpy(&val, t.p, 8); t.p += 8; nvals++; }
            else if (wt == 2) {
                if (!bytes_field(&t, &s) || (s.end - s.p) % 8) return 0;
                for (; s.p < s.end; s.p += 8) { memcpy(&val, s.p, 8); nvals++; }
            } else return 0;
            break;
        case 7: case 10: case 13: /* int_val, int64_val, half_val: varints */
            fields_seen |= 1 << f;
            if (wt == 0) {
                if (!varint(&t, &v)) return 0;
                val = f == 13 ? half_to_double((uint16_t)v) : f == 7 ? (double)(int32_t)v : (double)(int64_t)v;
                nvals++;
            } else if (wt == 2) {
                if (!bytes_field(&t, &s)) return 0;
                while (s.p < s.end) {
                    if (!varint(&s, &v)) return 0;
                    val = f == 13 ? half_to_double((uint16_t)v) : f == 7 ? (double)(int32_t)v : (double)(int64_t)v;
                    nvals++;
                }
            } else return 0;
            break;
        default: return 0; /* strings, bools, complex, resources, ... */
        }
    }
    if (content) {
        if (nvals) return 0;
        switch (dtype) {
        case DT_FLOAT: if (content_len != 4) return 0; { float x; memcpy(&x, content, 4); *out = x; } return 1;
        case DT_DOUBLE: if (content_len != 8) return 0; memcpy(out, content, 8); return 1;
        case DT_INT32: if (content_len != 4) return 0; *out = (double)(int32_t)rd32(content); return 1;
        case DT_INT64: if (content_len != 8) return 0; *out = (double)(int64_t)rd64(content); return 1;
        case DT_HALF: if (content_len != 2) return 0; { uint16_t h; memcpy(&h, content, 2); *out = half_to_double(h); } return 1;
        default: return 0;
        }
    }
    if (nvals != 1) return 0;
    int want = dtype == DT_FLOAT ? 1 << 5 : dtype == DT_DOUBLE ? 1 << 6 : dtype == DT_INT32 ? 1 << 7 :
               dtype == DT_INT64 ? 1 << 10 : dtype == DT_HALF ? 1 << 13 : 0;
    if (!want || fields_seen != want) return 0;
    *out = val;
    return 1;
}

/* Valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF): what the protobuf
   parser demands of a proto3 string. A value failing it goes to the proto decoder, which reports
   the record as unparseable, so both paths agree. */
static int utf8_ok(const uint8_t *p, size_t n) {
    const uint8_t *end = p + n;
    while (p < end) {
        uint8_t c = *p;
        if (c < 0x80) { p++; continue; }
        int k;
        uint32_t cp;
        if (c >= 0xC2 && c <= 0xDF) { k = 1; cp = c & 0x1F; }
        else if (c >= 0xE0 && c <= 0xEF) { k = 2; cp = c & 0x0F; }
        else if (c >= 0xF0 && c <= 0xF4) { k = 3; cp = c & 0x07; }
        else return 0;
        if (end - p <= k) return 0;
        for (int i = 1; i <= k; i++) {
            if ((p[i] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (p[i] & 0x3F);
        }
        if ((k == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
            return 0;
        p += k + 1;
    }
    return 1;
}

/* The string fields of a SummaryMetadata (display_name, summary_description, plugin_name) are UTF-8. */
static int metadata_ok(Cur m) {
    uint64_t key;
    while (m.p < m.end) {
        if (!field_key(&m, &key)) return 0;
        int f = (int)(key >> 3), wt = (int)(key & 7);
        Cur s;
        if ((f == 2 || f == 3) && wt == 2) {
            if (!bytes_field(&m, &s) || !utf8_ok(s.p, (size_t)(s.end - s.p))) return 0;
        } else if (f == 1 && wt == 2) {
            if (!bytes_field(&m, &s)) return 0;
            while (s.p < s.end) {
                Cur name;
                if (!field_key(&s, &key)) return 0;
                if ((key >> 3) == 1 && (key & 7) == 2) {
                    if (!bytes_field(&s, &name) || !utf8_ok(name.p, (size_t)(name.end - name.p))) return 0;
                } else if (!skip(&s, (int)(key & 7))) return 0;
            }
        } else if (!skip(&m, wt)) return 0;
    }
    return 1;
}

typedef struct {
    const uint8_t *tag; size_t tag_len;
    const uint8_t *meta; size_t meta_len; int has_meta;
    double value;
    int is_tensor;
    Py_ssize_t tag_index;   /* set by the caller: the index of a known tag, or -1 */
} FastValue;

/* One Summary.Value: 1 = a fast scalar (filled in), 0 = no value at all (skip), -1 = not fast. The tag's bytes are
   not checked here: a tag that is not valid UTF-8 makes the value not fast, which the caller checks (only for tags
   it has not seen: a tag it knows was checked when first seen). */
static int fast_value(Cur v, FastValue *fv) {
    uint64_t key;
    int have = 0;
    fv->tag = NULL; fv->tag_len = 0; fv->has_meta = 0; fv->meta = NULL; fv->meta_len = 0; fv->is_tensor = 0;
    while (v.p < v.end) {
        if (!field_key(&v, &key)) return -1;
        int f = (int)(key >> 3), wt = (int)(key & 7);
        Cur s;
        switch (f) {
        case 1: if (wt != 2 || !bytes_field(&v, &s)) return -1;  /* its UTF-8 is the caller's to check */
            fv->tag = s.p; fv->tag_len = (size_t)(s.end - s.p); break;
        case 2: {
            if (wt != 5 || v.end - v.p < 4) return -1;
            float x; memcpy(&x, v.p, 4); v.p += 4; fv->value = x; fv->is_tensor = 0; have = 1; break;
        }
        case 8: if (wt != 2 || !bytes_field(&v, &s)) return -1; if (!scalar_tensor(s, &fv->value)) return -1; fv->is_tensor = 1; have = 1; break;
        case 7: if (wt != 2 || !bytes_field(&v, &s) || !utf8_ok(s.p, (size_t)(s.end - s.p))) return -1; break;
        case 9: if (wt != 2 || !bytes_field(&v, &s) || !metadata_ok(s)) return -1;
            fv->meta = s.p; fv->meta_len = (size_t)(s.end - s.p); fv->has_meta = 1; break;
        case 3: case 4: case 5: case 6: return -1; /* old histogram, image, histo, audio */
        default: if (!skip(&v, wt)) return -1; break;  /* unknown fields */
        }
    }
    if (!have) return fv->has_meta ? -1 : 0;  /* metadata without a value: let the decoder see it */
    if (fv->tag_len == 0) return -1;            /* tensor keyed by node_name, or no tag */
    return 1;
}

#endif  /* TFEVENTS_FASTSCAN_WIRE_H */
