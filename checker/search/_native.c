/* kmc's compiled hot path (checker/search/native.py loads it;
 * checker/search/encoding.py and checker/search/expand.py keep the
 * pure-Python equivalents, used when this module is not built or
 * KMC_NATIVE=0).
 *
 * - encode(obj): the canonical msgpack bytes of a value, byte for byte those of
 *   checker.search.encoding's Python encoder: None, bool, int (IntEnum members
 *   too), float, str, bytes, tuple (NamedTuples too) as msgpack packs them, and
 *   a frozenset as ExtType(1, its elements' encodings sorted bytewise and
 *   joined). Anything else raises TypeError (the caller falls back to Python).
 * - FingerprintSet: the seen set, an open-addressing table of 64-bit
 *   fingerprints (8 bytes a slot, at most 3/4 full: 11-21 bytes per state,
 *   against ~70-90 for a Python set of ints).
 * - successor(parent, parent_parts, succ, select, fingerprint, seen): one
 *   successor's per-variable encodings (the parent's bytes for every
 *   variable whose object it shares, the others encoded), its fingerprint,
 *   the seen set's test-and-add and which variables changed, in one call:
 *   (parts, fp, changed), or None when the fingerprint was seen.
 * - columns(states): a batch's columns before msgpack (checker/search/codec.py).
 *
 * Every argument is checked (type, length, range) before its memory is read:
 * a wrong one raises, never crashes the interpreter.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* ---- a growable byte buffer ------------------------------------------------ */

typedef struct {
    unsigned char *p;
    Py_ssize_t len, cap;
    unsigned char small[512];
} Buf;

static void buf_init(Buf *b) { b->p = b->small; b->len = 0; b->cap = sizeof b->small; }
static void buf_free(Buf *b) { if (b->p != b->small) PyMem_Free(b->p); }

static int buf_grow(Buf *b, Py_ssize_t extra)
{
    Py_ssize_t cap = b->cap * 2;
    while (cap < b->len + extra) cap *= 2;
    unsigned char *q;
    if (b->p == b->small) {
        q = PyMem_Malloc(cap);
        if (q) memcpy(q, b->p, b->len);
    } else {
        q = PyMem_Realloc(b->p, cap);
    }
    if (!q) { PyErr_NoMemory(); return -1; }
    b->p = q; b->cap = cap;
    return 0;
}

static inline int buf_reserve(Buf *b, Py_ssize_t extra)
{
    return b->len + extra <= b->cap ? 0 : buf_grow(b, extra);
}

static inline int buf_put(Buf *b, const void *src, Py_ssize_t n)
{
    if (buf_reserve(b, n) < 0) return -1;
    memcpy(b->p + b->len, src, n);
    b->len += n;
    return 0;
}

static inline int put_byte_be(Buf *b, unsigned char head, uint64_t v, int nbytes)
{
    unsigned char tmp[9];
    tmp[0] = head;
    for (int i = 0; i < nbytes; i++) tmp[1 + i] = (unsigned char)(v >> (8 * (nbytes - 1 - i)));
    return buf_put(b, tmp, 1 + nbytes);
}

/* ---- msgpack, as msgpack-python's Packer writes it ----------------------- */

static int put_array_header(Buf *b, Py_ssize_t n)
{
    if (n < 16) { unsigned char c = 0x90 | (unsigned char)n; return buf_put(b, &c, 1); }
    if (n < 0x10000) return put_byte_be(b, 0xdc, (uint64_t)n, 2);
    return put_byte_be(b, 0xdd, (uint64_t)n, 4);
}

static int put_int(Buf *b, PyObject *o)
{
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow == 0 && v == -1 && PyErr_Occurred()) return -1;
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "int out of msgpack's range");
            return -1;
        }
        return put_byte_be(b, 0xcf, u, 8);
    }
    if (overflow < 0) {
        PyErr_SetString(PyExc_TypeError, "int out of msgpack's range");
        return -1;
    }
    if (v >= 0) {
        if (v < 128) { unsigned char c = (unsigned char)v; return buf_put(b, &c, 1); }
        if (v < 256) return put_byte_be(b, 0xcc, (uint64_t)v, 1);
        if (v < 65536) return put_byte_be(b, 0xcd, (uint64_t)v, 2);
        if (v <= 0xffffffffLL) return put_byte_be(b, 0xce, (uint64_t)v, 4);
        return put_byte_be(b, 0xcf, (uint64_t)v, 8);
    }
    if (v >= -32) { unsigned char c = (unsigned char)(v & 0xff); return buf_put(b, &c, 1); }
    if (v >= -128) return put_byte_be(b, 0xd0, (uint64_t)v & 0xff, 1);
    if (v >= -32768) return put_byte_be(b, 0xd1, (uint64_t)v & 0xffff, 2);
    if (v >= -2147483648LL) return put_byte_be(b, 0xd2, (uint64_t)v & 0xffffffff, 4);
    return put_byte_be(b, 0xd3, (uint64_t)v, 8);
}

static int put_str(Buf *b, PyObject *o)
{
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(o, &n);
    if (!s) return -1;
    int r;
    if (n < 32) { unsigned char c = 0xa0 | (unsigned char)n; r = buf_put(b, &c, 1); }
    else if (n < 256) r = put_byte_be(b, 0xd9, (uint64_t)n, 1);
    else if (n < 65536) r = put_byte_be(b, 0xda, (uint64_t)n, 2);
    else r = put_byte_be(b, 0xdb, (uint64_t)n, 4);
    return r < 0 ? -1 : buf_put(b, s, n);
}

static int put_bin(Buf *b, PyObject *o)
{
    Py_ssize_t n = PyBytes_GET_SIZE(o);
    int r;
    if (n < 256) r = put_byte_be(b, 0xc4, (uint64_t)n, 1);
    else if (n < 65536) r = put_byte_be(b, 0xc5, (uint64_t)n, 2);
    else r = put_byte_be(b, 0xc6, (uint64_t)n, 4);
    return r < 0 ? -1 : buf_put(b, PyBytes_AS_STRING(o), n);
}

static int put_ext_header(Buf *b, Py_ssize_t n, unsigned char code)
{
    unsigned char h[6];
    int k;
    switch (n) {
    case 1: h[0] = 0xd4; k = 1; break;
    case 2: h[0] = 0xd5; k = 1; break;
    case 4: h[0] = 0xd6; k = 1; break;
    case 8: h[0] = 0xd7; k = 1; break;
    case 16: h[0] = 0xd8; k = 1; break;
    default:
        if (n < 256) { h[0] = 0xc7; h[1] = (unsigned char)n; k = 2; }
        else if (n < 65536) { h[0] = 0xc8; h[1] = (unsigned char)(n >> 8); h[2] = (unsigned char)n; k = 3; }
        else { h[0] = 0xc9; h[1] = (unsigned char)(n >> 24); h[2] = (unsigned char)(n >> 16);
               h[3] = (unsigned char)(n >> 8); h[4] = (unsigned char)n; k = 5; }
    }
    h[k] = code;
    return buf_put(b, h, k + 1);
}

#define FROZENSET_EXT 1
#define MAX_DEPTH 64

static int put_obj(Buf *b, PyObject *o, int depth);

/* Elements' encodings sorted bytewise (Python's bytes order: memcmp, then
 * the shorter first) and joined, as an ExtType. */
typedef struct { Py_ssize_t off, len; } Span;
static const unsigned char *sort_base;

static int span_cmp(const void *x, const void *y)
{
    const Span *a = x, *c = y;
    Py_ssize_t n = a->len < c->len ? a->len : c->len;
    int r = memcmp(sort_base + a->off, sort_base + c->off, (size_t)n);
    if (r) return r;
    return (a->len > c->len) - (a->len < c->len);
}

static int put_set(Buf *b, PyObject *o, int depth)
{
    Py_ssize_t n = PySet_GET_SIZE(o);
    if (n == 0) return put_ext_header(b, 0, FROZENSET_EXT);
    Buf tmp; buf_init(&tmp);
    Span stack_spans[32];
    Span *spans = n <= 32 ? stack_spans : PyMem_Malloc(sizeof(Span) * n);
    if (!spans) { PyErr_NoMemory(); return -1; }
    Py_ssize_t pos = 0, i = 0;
    PyObject *key;
    int rc = -1;
#if PY_VERSION_HEX < 0x030D0000
    Py_hash_t hash;
    while (_PySet_NextEntry(o, &pos, &key, &hash)) {
        Py_ssize_t start = tmp.len;
        if (put_obj(&tmp, key, depth + 1) < 0) goto done;
        spans[i].off = start; spans[i].len = tmp.len - start; i++;
    }
#else
    (void)pos;
    PyObject *it = PyObject_GetIter(o);
    if (!it) goto done;
    while ((key = PyIter_Next(it))) {
        Py_ssize_t start = tmp.len;
        int bad = i >= n || put_obj(&tmp, key, depth + 1) < 0;
        Py_DECREF(key);
        if (bad) { Py_DECREF(it); if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "set changed size"); goto done; }
        spans[i].off = start; spans[i].len = tmp.len - start; i++;
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) goto done;
#endif
    sort_base = tmp.p;  /* the GIL is held: nothing else sorts meanwhile */
    qsort(spans, (size_t)i, sizeof(Span), span_cmp);
    if (put_ext_header(b, tmp.len, FROZENSET_EXT) < 0) goto done;
    if (buf_reserve(b, tmp.len) < 0) goto done;
    for (Py_ssize_t k = 0; k < i; k++) {
        memcpy(b->p + b->len, tmp.p + spans[k].off, spans[k].len);
        b->len += spans[k].len;
    }
    rc = 0;
done:
    if (spans != stack_spans) PyMem_Free(spans);
    buf_free(&tmp);
    return rc;
}

static int put_obj(Buf *b, PyObject *o, int depth)
{
    if (depth > MAX_DEPTH) {
        PyErr_SetString(PyExc_TypeError, "value nested too deeply");
        return -1;
    }
    if (o == Py_None) { unsigned char c = 0xc0; return buf_put(b, &c, 1); }
    if (o == Py_True) { unsigned char c = 0xc3; return buf_put(b, &c, 1); }
    if (o == Py_False) { unsigned char c = 0xc2; return buf_put(b, &c, 1); }
    if (PyLong_Check(o)) return put_int(b, o);
    if (PyTuple_Check(o)) {
        Py_ssize_t n = PyTuple_GET_SIZE(o);
        if (put_array_header(b, n) < 0) return -1;
        for (Py_ssize_t i = 0; i < n; i++)
            if (put_obj(b, PyTuple_GET_ITEM(o, i), depth + 1) < 0) return -1;
        return 0;
    }
    if (PyUnicode_Check(o)) return put_str(b, o);
    if (PyFrozenSet_Check(o) || PySet_Check(o)) return put_set(b, o, depth);
    if (PyBytes_Check(o)) return put_bin(b, o);
    if (PyFloat_Check(o)) {
        double d = PyFloat_AS_DOUBLE(o);
        uint64_t u; memcpy(&u, &d, 8);
        return put_byte_be(b, 0xcb, u, 8);
    }
    PyErr_Format(PyExc_TypeError, "kmc cannot encode a value of type %.100s", Py_TYPE(o)->tp_name);
    return -1;
}

static PyObject *encode_to_bytes(PyObject *o)
{
    Buf b; buf_init(&b);
    PyObject *r = NULL;
    if (put_obj(&b, o, 0) == 0) r = PyBytes_FromStringAndSize((const char *)b.p, b.len);
    buf_free(&b);
    return r;
}

static PyObject *native_encode(PyObject *self, PyObject *o) { return encode_to_bytes(o); }

/* ---- FingerprintSet ---------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    uint64_t *slots;     /* 0 marks an empty slot; fingerprint 0 is has_zero */
    Py_ssize_t mask;
    Py_ssize_t used;     /* nonzero fingerprints stored */
    int has_zero;
} FPSet;

static PyTypeObject FPSetType;

static int fpset_alloc(FPSet *s, Py_ssize_t cap)
{
    s->slots = PyMem_Calloc((size_t)cap, sizeof(uint64_t));
    if (!s->slots) { PyErr_NoMemory(); return -1; }
    s->mask = cap - 1;
    return 0;
}

static int fpset_grow(FPSet *s)
{
    uint64_t *old = s->slots;
    Py_ssize_t oldcap = s->mask + 1;
    if (fpset_alloc(s, oldcap * 2) < 0) { s->slots = old; s->mask = oldcap - 1; return -1; }
    for (Py_ssize_t i = 0; i < oldcap; i++) {
        uint64_t v = old[i];
        if (!v) continue;
        Py_ssize_t j = (Py_ssize_t)(v & s->mask);
        while (s->slots[j]) j = (j + 1) & s->mask;
        s->slots[j] = v;
    }
    PyMem_Free(old);
    return 0;
}

/* 1: added, 0: present already, -1: error */
static int fpset_insert(FPSet *s, uint64_t v)
{
    if (v == 0) {
        if (s->has_zero) return 0;
        s->has_zero = 1;
        return 1;
    }
    /* fingerprints are xxh3 outputs: their low bits index the table directly */
    Py_ssize_t j = (Py_ssize_t)(v & s->mask);
    uint64_t x;
    while ((x = s->slots[j]) != 0) {
        if (x == v) return 0;
        j = (j + 1) & s->mask;
    }
    s->slots[j] = v;
    s->used++;
    if (s->used * 4 >= (s->mask + 1) * 3 && fpset_grow(s) < 0) return -1;
    return 1;
}

static int fpset_has(FPSet *s, uint64_t v)
{
    if (v == 0) return s->has_zero;
    Py_ssize_t j = (Py_ssize_t)(v & s->mask);
    uint64_t x;
    while ((x = s->slots[j]) != 0) {
        if (x == v) return 1;
        j = (j + 1) & s->mask;
    }
    return 0;
}

static int as_fp(PyObject *o, uint64_t *out)
{
    if (!PyLong_Check(o)) {
        PyErr_SetString(PyExc_TypeError, "a fingerprint is an int");
        return -1;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow == 0) {
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < 0) { PyErr_SetString(PyExc_ValueError, "a 64-bit fingerprint is >= 0"); return -1; }
        *out = (uint64_t)v;
        return 0;
    }
    unsigned long long u = PyLong_AsUnsignedLongLong(o);
    if (u == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_SetString(PyExc_ValueError, "a fingerprint of FingerprintSet has 64 bits");
        return -1;
    }
    *out = u;
    return 0;
}

static PyObject *fpset_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    Py_ssize_t cap = 1024;
    static char *kwlist[] = {"capacity", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|n", kwlist, &cap)) return NULL;
    if (cap < 0) {
        PyErr_SetString(PyExc_ValueError, "FingerprintSet(capacity): capacity is >= 0");
        return NULL;
    }
    /* the table (4/3 of capacity, to a power of two, 8 bytes a slot) must be
     * addressable: past that, the doubling below would overflow and never end */
    if (cap > PY_SSIZE_T_MAX / 32) {
        PyErr_Format(PyExc_OverflowError, "FingerprintSet(capacity): %zd fingerprints is more "
                     "than a table of 8 bytes a slot can address", cap);
        return NULL;
    }
    Py_ssize_t c = 1024;
    while (c < cap + cap / 3) c *= 2;
    FPSet *s = (FPSet *)type->tp_alloc(type, 0);
    if (!s) return NULL;
    if (fpset_alloc(s, c) < 0) { Py_DECREF(s); return NULL; }
    return (PyObject *)s;
}

static void fpset_dealloc(FPSet *s)
{
    PyMem_Free(s->slots);
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static Py_ssize_t fpset_len(FPSet *s) { return s->used + s->has_zero; }

static int fpset_contains(FPSet *s, PyObject *o)
{
    uint64_t v;
    if (as_fp(o, &v) < 0) {
        /* not a 64-bit fingerprint: not in the set (as a Python set would say) */
        PyErr_Clear();
        return 0;
    }
    return fpset_has(s, v);
}

static PyObject *fpset_add(FPSet *s, PyObject *o)
{
    uint64_t v;
    if (as_fp(o, &v) < 0 || fpset_insert(s, v) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *fpset_add_new(FPSet *s, PyObject *o)
{
    uint64_t v;
    int r;
    if (as_fp(o, &v) < 0 || (r = fpset_insert(s, v)) < 0) return NULL;
    return PyBool_FromLong(r);
}

static PyObject *fpset_update(FPSet *s, PyObject *it)
{
    PyObject *iter = PyObject_GetIter(it), *o;
    if (!iter) return NULL;
    while ((o = PyIter_Next(iter))) {
        uint64_t v;
        int bad = as_fp(o, &v) < 0 || fpset_insert(s, v) < 0;
        Py_DECREF(o);
        if (bad) { Py_DECREF(iter); return NULL; }
    }
    Py_DECREF(iter);
    if (PyErr_Occurred()) return NULL;
    Py_RETURN_NONE;
}

/* The fingerprints as native-endian uint64 bytes (array('Q').frombytes). */
static PyObject *fpset_to_bytes(FPSet *s, PyObject *unused)
{
    Py_ssize_t n = fpset_len(s);
    PyObject *r = PyBytes_FromStringAndSize(NULL, n * 8);
    if (!r) return NULL;
    uint64_t *out = (uint64_t *)PyBytes_AS_STRING(r);
    Py_ssize_t k = 0;
    if (s->has_zero) out[k++] = 0;
    for (Py_ssize_t i = 0; i <= s->mask; i++)
        if (s->slots[i]) out[k++] = s->slots[i];
    return r;
}

static PyObject *fpset_iter(FPSet *s)
{
    PyObject *b = fpset_to_bytes(s, NULL);
    if (!b) return NULL;
    PyObject *mv = PyMemoryView_FromObject(b);
    Py_DECREF(b);
    if (!mv) return NULL;
    PyObject *cast = PyObject_CallMethod(mv, "cast", "s", "Q");
    Py_DECREF(mv);
    if (!cast) return NULL;
    PyObject *it = PyObject_GetIter(cast);
    Py_DECREF(cast);
    return it;
}

static PyObject *fpset_sizeof(FPSet *s, PyObject *unused)
{
    return PyLong_FromSsize_t((Py_ssize_t)sizeof(FPSet) + (s->mask + 1) * 8);
}

static PyMethodDef fpset_methods[] = {
    {"add", (PyCFunction)fpset_add, METH_O, "Add a fingerprint."},
    {"add_new", (PyCFunction)fpset_add_new, METH_O, "Add a fingerprint; True if it was not there."},
    {"update", (PyCFunction)fpset_update, METH_O, "Add every fingerprint of an iterable."},
    {"to_bytes", (PyCFunction)fpset_to_bytes, METH_NOARGS,
     "The fingerprints as native-endian uint64 bytes, in table order."},
    {"__sizeof__", (PyCFunction)fpset_sizeof, METH_NOARGS, NULL},
    {NULL}
};

static PySequenceMethods fpset_as_seq = {
    .sq_length = (lenfunc)fpset_len,
    .sq_contains = (objobjproc)fpset_contains,
};

static PyTypeObject FPSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "checker.search._native.FingerprintSet",
    .tp_basicsize = sizeof(FPSet),
    .tp_dealloc = (destructor)fpset_dealloc,
    .tp_as_sequence = &fpset_as_seq,
    .tp_iter = (getiterfunc)fpset_iter,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A set of 64-bit fingerprints (open addressing, 8 bytes a slot).",
    .tp_methods = fpset_methods,
    .tp_new = fpset_new,
};

#include "_claims.h"   /* the auto engine's shared seen set */

/* ---- one successor ------------------------------------------------------------ */

/* successor(parent, parent_parts, succ, select, fingerprint, seen)
 *   parent, succ: tuples of the same length (states); parent_parts: list of
 *   bytes; select: None (every variable) or a tuple of the view's indices;
 *   fingerprint: bytes -> int; seen: FingerprintSet, Claims or set.
 * -> (parts, fp, changed) for a new fingerprint (added to seen), None for a
 *   seen one; changed: an int whose bit i says variable i is another object
 *   than the parent's (as many bits as the state has variables).
 * TypeError when a changed variable holds a value this encoder refuses
 * (the caller falls back to Python). */
static PyObject *native_successor(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "successor() takes 6 arguments");
        return NULL;
    }
    PyObject *parent = args[0], *pparts = args[1], *succ = args[2];
    PyObject *select = args[3], *fpfunc = args[4], *seen = args[5];
    if (!PyTuple_Check(parent) || !PyTuple_Check(succ) || !(PyList_Check(pparts) || PyTuple_Check(pparts))) {
        PyErr_SetString(PyExc_TypeError, "successor(): states are tuples, parts a list or tuple");
        return NULL;
    }
    if (select != Py_None && !PyTuple_Check(select)) {
        PyErr_SetString(PyExc_TypeError, "successor(): select is None or a tuple of variable indices");
        return NULL;
    }
    if (!PyCallable_Check(fpfunc)) {
        PyErr_SetString(PyExc_TypeError, "successor(): fingerprint is a function of bytes");
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(succ);
    if (PyTuple_GET_SIZE(parent) != n || PySequence_Fast_GET_SIZE(pparts) != n) {
        PyErr_SetString(PyExc_ValueError, "successor(): parent, its parts and successor differ in length");
        return NULL;
    }
    /* the variables changed, bit i for variable i: one word up to 64
     * variables, more words past that (the Python int has every bit) */
    Py_ssize_t nwords = n > 64 ? (n + 63) / 64 : 1;
    uint64_t word0 = 0, *changed = &word0;
    if (nwords > 1 && !(changed = PyMem_Calloc((size_t)nwords, sizeof(uint64_t))))
        return PyErr_NoMemory();
    PyObject *parts = PyList_New(n);
    if (!parts) goto fail_mask;
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyTuple_GET_ITEM(succ, i), *p;
        if (v == PyTuple_GET_ITEM(parent, i)) {
            p = PySequence_Fast_GET_ITEM(pparts, i);
            if (!PyBytes_Check(p)) {
                PyErr_SetString(PyExc_TypeError, "successor(): a parent's part is bytes");
                Py_DECREF(parts); goto fail_mask;
            }
            Py_INCREF(p);
        } else {
            changed[i / 64] |= (uint64_t)1 << (i % 64);
            p = encode_to_bytes(v);
            if (!p) { Py_DECREF(parts); goto fail_mask; }
        }
        PyList_SET_ITEM(parts, i, p);
        total += PyBytes_GET_SIZE(p);
    }
    /* the bytes the fingerprint covers: every part, or the view's */
    PyObject *joined;
    if (select == Py_None) {
        joined = PyBytes_FromStringAndSize(NULL, total);
        if (!joined) { Py_DECREF(parts); goto fail_mask; }
        char *w = PyBytes_AS_STRING(joined);
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *p = PyList_GET_ITEM(parts, i);
            memcpy(w, PyBytes_AS_STRING(p), PyBytes_GET_SIZE(p));
            w += PyBytes_GET_SIZE(p);
        }
    } else {
        Py_ssize_t k = PyTuple_GET_SIZE(select), sel_total = 0;
        for (Py_ssize_t j = 0; j < k; j++) {
            Py_ssize_t i = PyLong_AsSsize_t(PyTuple_GET_ITEM(select, j));
            if (i < 0 || i >= n) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_IndexError, "view index out of range");
                Py_DECREF(parts); goto fail_mask;
            }
            sel_total += PyBytes_GET_SIZE(PyList_GET_ITEM(parts, i));
        }
        joined = PyBytes_FromStringAndSize(NULL, sel_total);
        if (!joined) { Py_DECREF(parts); goto fail_mask; }
        char *w = PyBytes_AS_STRING(joined);
        for (Py_ssize_t j = 0; j < k; j++) {
            PyObject *p = PyList_GET_ITEM(parts, PyLong_AsSsize_t(PyTuple_GET_ITEM(select, j)));
            memcpy(w, PyBytes_AS_STRING(p), PyBytes_GET_SIZE(p));
            w += PyBytes_GET_SIZE(p);
        }
    }
    PyObject *fp = PyObject_CallOneArg(fpfunc, joined);
    Py_DECREF(joined);
    if (!fp) { Py_DECREF(parts); goto fail_mask; }
    int added;
    if (Py_TYPE(seen) == &FPSetType || Py_TYPE(seen) == &ClaimsType) {   /* (Claims: the auto engine's workers) */
        uint64_t v;
        if (as_fp(fp, &v) < 0) { Py_DECREF(fp); Py_DECREF(parts); goto fail_mask; }
        added = Py_TYPE(seen) == &FPSetType ? fpset_insert((FPSet *)seen, v) : claims_claim((Claims *)seen, v);
    } else {  /* a Python set (128-bit fingerprints, the pure seen set) or set-like */
        added = PySequence_Contains(seen, fp);
        if (added == 0) {
            if (PyAnySet_Check(seen)) {
                added = PySet_Add(seen, fp) < 0 ? -1 : 1;
            } else {
                PyObject *r = PyObject_CallMethod(seen, "add", "O", fp);
                added = r ? 1 : -1;
                Py_XDECREF(r);
            }
        } else if (added == 1) {
            added = 0;
        }
    }
    if (added <= 0) {
        Py_DECREF(fp); Py_DECREF(parts);
        if (added < 0) goto fail_mask;
        if (changed != &word0) PyMem_Free(changed);
        Py_RETURN_NONE;
    }
    PyObject *mask = PyLong_FromUnsignedLongLong(changed[nwords - 1]);
    for (Py_ssize_t w = nwords - 2; w >= 0 && mask; w--) {   /* mask << 64 | changed[w] */
        PyObject *shift = PyLong_FromLong(64), *low = PyLong_FromUnsignedLongLong(changed[w]);
        PyObject *hi = shift ? PyNumber_Lshift(mask, shift) : NULL;
        Py_DECREF(mask);
        mask = hi && low ? PyNumber_Or(hi, low) : NULL;
        Py_XDECREF(shift); Py_XDECREF(low); Py_XDECREF(hi);
    }
    if (changed != &word0) PyMem_Free(changed);
    PyObject *r = mask ? PyTuple_New(3) : NULL;
    if (!r) { Py_XDECREF(mask); Py_DECREF(fp); Py_DECREF(parts); return NULL; }
    PyTuple_SET_ITEM(r, 0, parts);
    PyTuple_SET_ITEM(r, 1, fp);
    PyTuple_SET_ITEM(r, 2, mask);
    return r;
fail_mask:
    if (changed != &word0) PyMem_Free(changed);
    return NULL;
}

/* columns(states) -> codec.pack_states' columns before msgpack: states is a
 * list of n lists (or tuples) of bytes, all of one length m; per variable,
 * [the one part] when every state has the same, else [distinct parts in
 * order of first occurrence, "H" or "I", their indices as little-endian
 * uint16 or uint32]. Equal parts are one (a dict, as dict.fromkeys); a
 * part that is the previous state's object skips the look-up (siblings
 * share their parent's). TypeError for anything else (the caller falls
 * back to Python). */
static PyObject *native_columns(PyObject *self, PyObject *states)
{
    if (!PyList_Check(states)) {
        PyErr_SetString(PyExc_TypeError, "columns(): a list of states");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(states);
    if (n == 0) return PyList_New(0);
    Py_ssize_t m = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *st = PyList_GET_ITEM(states, i);
        if (!PyList_Check(st) && !PyTuple_Check(st)) {
            PyErr_SetString(PyExc_TypeError, "columns(): a state is a list or tuple of parts");
            return NULL;
        }
        Py_ssize_t k = PySequence_Fast_GET_SIZE(st);
        if (m < 0) m = k;
        else if (k != m) {
            PyErr_SetString(PyExc_TypeError, "columns(): states of different lengths");
            return NULL;
        }
    }
    uint32_t *idx = PyMem_Malloc(sizeof(uint32_t) * (size_t)n);
    PyObject *cols = PyList_New(m);
    if (!idx || !cols) { PyMem_Free(idx); Py_XDECREF(cols); return PyErr_NoMemory(); }
    for (Py_ssize_t j = 0; j < m; j++) {
        PyObject *table = PyList_New(0), *index = PyDict_New(), *prev = NULL, *col = NULL;
        uint32_t prev_i = 0;
        if (!table || !index) goto fail_col;
        for (Py_ssize_t i = 0; i < n; i++) {
            PyObject *p = PySequence_Fast_GET_ITEM(PyList_GET_ITEM(states, i), j);
            if (p == prev) { idx[i] = prev_i; continue; }
            if (!PyBytes_CheckExact(p)) {
                PyErr_SetString(PyExc_TypeError, "columns(): a part is bytes");
                goto fail_col;
            }
            PyObject *v = PyDict_GetItemWithError(index, p);
            uint32_t k;
            if (v) {
                k = (uint32_t)PyLong_AsUnsignedLong(v);
            } else {
                if (PyErr_Occurred()) goto fail_col;
                k = (uint32_t)PyList_GET_SIZE(table);
                PyObject *kk = PyLong_FromUnsignedLong(k);
                if (!kk || PyDict_SetItem(index, p, kk) < 0 || PyList_Append(table, p) < 0) {
                    Py_XDECREF(kk); goto fail_col;
                }
                Py_DECREF(kk);
            }
            idx[i] = prev_i = k;
            prev = p;
        }
        Py_ssize_t t = PyList_GET_SIZE(table);
        if (t == 1) {
            col = table;  /* [the one part] */
            table = NULL;
        } else {
            int wide = t > 0xFFFF;
            Py_ssize_t w = wide ? 4 : 2;
            PyObject *raw = PyBytes_FromStringAndSize(NULL, n * w);
            if (!raw) goto fail_col;
            unsigned char *b = (unsigned char *)PyBytes_AS_STRING(raw);
            for (Py_ssize_t i = 0; i < n; i++) {
                uint32_t x = idx[i];
                b[i * w] = x & 0xFF;
                b[i * w + 1] = (x >> 8) & 0xFF;
                if (wide) { b[i * w + 2] = (x >> 16) & 0xFF; b[i * w + 3] = (x >> 24) & 0xFF; }
            }
            col = Py_BuildValue("[OsN]", table, wide ? "I" : "H", raw);
            if (!col) goto fail_col;
            Py_CLEAR(table);
        }
        Py_DECREF(index);
        PyList_SET_ITEM(cols, j, col);
        continue;
    fail_col:
        Py_XDECREF(table); Py_XDECREF(index);
        PyMem_Free(idx); Py_DECREF(cols);
        return NULL;
    }
    PyMem_Free(idx);
    return cols;
}

static PyMethodDef native_methods[] = {
    {"encode", native_encode, METH_O, "The canonical msgpack bytes of a value."},
    {"successor", (PyCFunction)(void (*)(void))native_successor, METH_FASTCALL,
     "successor(parent, parent_parts, succ, select, fingerprint, seen) -> (parts, fp, changed) | None"},
    {"columns", native_columns, METH_O, "columns(states) -> codec.pack_states' columns (before msgpack)."},
    {NULL}
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "checker.search._native",
    "kmc's compiled hot path: canonical encoding, one successor's fingerprint, the seen set, a batch's columns.",
    -1, native_methods,
};

PyMODINIT_FUNC PyInit__native(void)
{
    if (PyType_Ready(&FPSetType) < 0) return NULL;
    PyObject *m = PyModule_Create(&native_module);
    if (!m) return NULL;
    Py_INCREF(&FPSetType);
    if (PyModule_AddObject(m, "FingerprintSet", (PyObject *)&FPSetType) < 0) {
        Py_DECREF(&FPSetType); Py_DECREF(m); return NULL;
    }
    if (add_claims(m) < 0) { Py_DECREF(m); return NULL; }
    return m;
}
