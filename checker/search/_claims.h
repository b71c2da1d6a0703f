/* The auto engine's seen set, shared by its worker processes
 * (checker/search/parallel.py; included by _native.c, after FingerprintSet).
 *
 * - ClaimTable: an open-addressing table of (fingerprint, key) slots in one
 *   anonymous shared mapping, made before the workers fork, so every worker
 *   tests and inserts into the same table. A key says where a state was
 *   found in BFS order: 0 for a state of an earlier level, else
 *   ((parent's index in its level) << 24 | successor's ordinal) + 1. An
 *   insert keeps the smallest key (an atomic max of ~key): whatever the
 *   order the workers get there in, the slot ends with the state's first
 *   discovery in BFS order, the local engine's. The mapping is reserved
 *   once with room for two tables as big as the machine's memory
 *   (MAP_NORESERVE: untouched pages cost nothing); growing rehashes into the
 *   other half while no worker inserts (the workers each rehash a part, at
 *   once), and gives the old half's pages back.
 * - Claims: one worker's view, the `seen` argument of successor() and the
 *   Python twin: `fp in claims` is True when the state is an older level's
 *   or was found earlier in BFS order, `claims.add(fp)` claims it under the
 *   current successor's key; at(start) starts a chunk, begin(i) its state i's
 *   successors.
 */
#include <sys/mman.h>
#include <unistd.h>

typedef struct { uint64_t fp; uint64_t nkey; } ClaimSlot;   /* nkey = ~key; 0: no key yet */

typedef struct {
    uint64_t half;        /* the half the table is in */
    uint64_t mask;        /* capacity - 1 */
    int64_t used;         /* slots taken */
    int64_t limit;        /* an insert past this many slots fails (ClaimTableFull) */
    uint64_t zero_nkey;   /* fingerprint 0 lives here */
    uint64_t zero_used;
} ClaimHead;

typedef struct {
    PyObject_HEAD
    unsigned char *base;   /* head page, then two halves of `half_slots` slots */
    uint64_t half_slots;
    size_t total;
} ClaimTable;

static PyTypeObject ClaimTableType;
static PyObject *ClaimTableFull;

#define CLAIM_HEAD(t) ((ClaimHead *)(t)->base)
#define CLAIM_PAGE 4096

static ClaimSlot *claim_slots(ClaimTable *t, uint64_t half)
{
    return (ClaimSlot *)(t->base + CLAIM_PAGE + half * t->half_slots * sizeof(ClaimSlot));
}

/* the key word of fp's slot, found, or taken when `take`; NULL: absent (not
 * taking) or the table is past its limit (taking: ClaimTableFull set) */
static uint64_t *claim_slot(ClaimTable *t, uint64_t fp, int take)
{
    ClaimHead *h = CLAIM_HEAD(t);
    if (fp == 0) {
        if (!__atomic_load_n(&h->zero_used, __ATOMIC_ACQUIRE)) {
            if (!take) return NULL;
            __atomic_store_n(&h->zero_used, 1, __ATOMIC_RELEASE);
        }
        return &h->zero_nkey;
    }
    ClaimSlot *s = claim_slots(t, h->half);
    uint64_t mask = h->mask, j = fp & mask;
    for (;;) {
        uint64_t x = __atomic_load_n(&s[j].fp, __ATOMIC_ACQUIRE);
        if (x == fp) return &s[j].nkey;
        if (x == 0) {
            if (!take) return NULL;
            if (__atomic_load_n(&h->used, __ATOMIC_RELAXED) >= h->limit) {
                PyErr_SetString(ClaimTableFull, "the shared seen set is full");
                return NULL;
            }
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(&s[j].fp, &expected, fp, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                __atomic_fetch_add(&h->used, 1, __ATOMIC_RELAXED);
                return &s[j].nkey;
            }
            if (expected == fp) return &s[j].nkey;
        }
        j = (j + 1) & mask;
    }
}

/* the smallest key fp has (UINT64_MAX: none) */
static uint64_t claim_min(ClaimTable *t, uint64_t fp)
{
    uint64_t *k = claim_slot(t, fp, 0);
    return k ? ~__atomic_load_n(k, __ATOMIC_ACQUIRE) : UINT64_MAX;
}

/* keep the smaller of fp's key and `key`: 1 when no smaller key was there
 * (`key` is claimed), 0 when one was (nothing written), -1: full */
static int claim_insert(ClaimTable *t, uint64_t fp, uint64_t key)
{
    uint64_t *k = claim_slot(t, fp, 1);
    if (!k) return -1;
    uint64_t nk = ~key, cur = __atomic_load_n(k, __ATOMIC_ACQUIRE);
    if (cur > nk) return 0;
    while (cur < nk && !__atomic_compare_exchange_n(k, &cur, nk, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        ;
    return 1;
}

static void claim_set_limit(ClaimHead *h)
{
    h->limit = (int64_t)((h->mask + 1) / 16 * 15);   /* 15/16 full at most */
}

static PyObject *claimtable_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    unsigned long long half_slots = 0, capacity = 1 << 16;
    static char *kwlist[] = {"reserve", "capacity", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "K|K", kwlist, &half_slots, &capacity)) return NULL;
    if (half_slots < 1024 || (half_slots & (half_slots - 1)) || capacity < 1024 ||
        (capacity & (capacity - 1)) || capacity > half_slots) {
        PyErr_SetString(PyExc_ValueError, "ClaimTable: reserve and capacity are powers of 2, "
                        "1024 <= capacity <= reserve");
        return NULL;
    }
    ClaimTable *t = (ClaimTable *)type->tp_alloc(type, 0);
    if (!t) return NULL;
    t->half_slots = half_slots;
    t->total = CLAIM_PAGE + 2 * (size_t)half_slots * sizeof(ClaimSlot);
#ifndef MAP_NORESERVE
#define MAP_NORESERVE 0
#endif
    void *p = mmap(NULL, t->total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        t->base = NULL;
        Py_DECREF(t);
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    t->base = p;
    ClaimHead *h = CLAIM_HEAD(t);
    h->half = 0;
    h->mask = capacity - 1;
    claim_set_limit(h);
    return (PyObject *)t;
}

static void claimtable_dealloc(ClaimTable *t)
{
    if (t->base) munmap(t->base, t->total);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

static int claim_fp_arg(PyObject *o, uint64_t *out)
{
    return as_fp(o, out);
}

static int claim_capacity_arg(ClaimTable *t, PyObject *arg, uint64_t *cap)
{
    unsigned long long c = PyLong_AsUnsignedLongLong(arg);
    if (c == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    if ((c & (c - 1)) || c <= CLAIM_HEAD(t)->mask + 1 || c > t->half_slots) {
        PyErr_SetString(PyExc_ValueError, "ClaimTable: a larger power of 2 within the reserve");
        return -1;
    }
    *cap = c;
    return 0;
}

/* rehash(capacity, part, parts): the slots of part `part` of `parts` of the
 * table copied into the other half, as a table of `capacity` slots; the
 * parts may run at once, in as many processes (a slot is taken there by
 * compare-and-swap), while nothing inserts; switch(capacity) then moves the
 * table there */
static PyObject *claimtable_rehash(ClaimTable *t, PyObject *const *args, Py_ssize_t nargs)
{
    uint64_t cap;
    unsigned long long part, parts;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "rehash(capacity, part, parts)");
        return NULL;
    }
    if (claim_capacity_arg(t, args[0], &cap) < 0) return NULL;
    part = PyLong_AsUnsignedLongLong(args[1]);
    parts = PyLong_AsUnsignedLongLong(args[2]);
    if (PyErr_Occurred()) return NULL;
    if (parts == 0 || part >= parts) {
        PyErr_SetString(PyExc_ValueError, "rehash: 0 <= part < parts");
        return NULL;
    }
    ClaimHead *h = CLAIM_HEAD(t);
    uint64_t n = h->mask + 1, mask = cap - 1;
    uint64_t lo = n / parts * part + (part < n % parts ? part : n % parts);
    uint64_t hi = lo + n / parts + (part < n % parts);
    ClaimSlot *src = claim_slots(t, h->half), *dst = claim_slots(t, 1 - h->half);
    for (uint64_t i = lo; i < hi; i++) {
        uint64_t fp = src[i].fp;
        if (!fp) continue;
        for (uint64_t j = fp & mask;; j = (j + 1) & mask) {
            uint64_t expected = 0;
            if (__atomic_compare_exchange_n(&dst[j].fp, &expected, fp, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                __atomic_store_n(&dst[j].nkey, src[i].nkey, __ATOMIC_RELEASE);
                break;
            }
        }
    }
    Py_RETURN_NONE;
}

/* switch(capacity): the table is now the other half, every part rehashed there */
static PyObject *claimtable_switch(ClaimTable *t, PyObject *arg)
{
    uint64_t cap;
    if (claim_capacity_arg(t, arg, &cap) < 0) return NULL;
    ClaimHead *h = CLAIM_HEAD(t);
    ClaimSlot *src = claim_slots(t, h->half);
    size_t bytes = (size_t)(h->mask + 1) * sizeof(ClaimSlot);
    h->half = 1 - h->half;
    h->mask = cap - 1;
    claim_set_limit(h);
    /* the old table's pages back to the system (shared memory: MADV_REMOVE),
     * zero for the next growth */
#ifdef MADV_REMOVE
    madvise((void *)src, bytes, MADV_REMOVE);
#else
    memset((void *)src, 0, bytes);
#endif
    Py_RETURN_NONE;
}

/* add_old(fps): each fingerprint (a packed uint64 array) as an earlier level's */
static PyObject *claimtable_add_old(ClaimTable *t, PyObject *arg)
{
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    const uint64_t *v = (const uint64_t *)b.buf;
    Py_ssize_t n = b.len / 8;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (claim_insert(t, v[i], 0) < 0) { PyBuffer_Release(&b); return NULL; }
    }
    PyBuffer_Release(&b);
    Py_RETURN_NONE;
}

/* fill(fingerprint_set): every fingerprint of a FingerprintSet as an earlier level's */
static PyObject *claimtable_fill(ClaimTable *t, PyObject *arg)
{
    if (Py_TYPE(arg) != &FPSetType) {
        PyErr_SetString(PyExc_TypeError, "ClaimTable.fill takes a FingerprintSet");
        return NULL;
    }
    FPSet *s = (FPSet *)arg;
    if (s->has_zero && claim_insert(t, 0, 0) < 0) return NULL;
    for (Py_ssize_t i = 0; i <= s->mask; i++) {
        if (s->slots[i] && claim_insert(t, s->slots[i], 0) < 0) return NULL;
    }
    Py_RETURN_NONE;
}

/* owned(keys, fps, limit) -> the indices (uint32, packed) of the entries
 * whose key is their fingerprint's smallest and at most `limit`; those
 * become an earlier level's (key 0) */
static PyObject *claimtable_owned(ClaimTable *t, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) { PyErr_SetString(PyExc_TypeError, "owned(keys, fps, limit)"); return NULL; }
    unsigned long long limit = PyLong_AsUnsignedLongLong(args[2]);
    if (limit == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    Py_buffer kb, fb;
    if (PyObject_GetBuffer(args[0], &kb, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(args[1], &fb, PyBUF_SIMPLE) < 0) { PyBuffer_Release(&kb); return NULL; }
    Py_ssize_t n = kb.len / 8;
    if (fb.len / 8 != n || n > 0xFFFFFFFFLL) {
        PyBuffer_Release(&kb); PyBuffer_Release(&fb);
        PyErr_SetString(PyExc_ValueError, "owned(): as many keys as fingerprints");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * 4);
    if (!out) { PyBuffer_Release(&kb); PyBuffer_Release(&fb); return NULL; }
    uint32_t *w = (uint32_t *)PyBytes_AS_STRING(out);
    const uint64_t *keys = (const uint64_t *)kb.buf, *fps = (const uint64_t *)fb.buf;
    Py_ssize_t m = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (keys[i] > limit) continue;
        uint64_t *k = claim_slot(t, fps[i], 0);
        if (k && ~__atomic_load_n(k, __ATOMIC_ACQUIRE) == keys[i]) {
            __atomic_store_n(k, ~(uint64_t)0, __ATOMIC_RELEASE);
            w[m++] = (uint32_t)i;
        }
    }
    PyBuffer_Release(&kb); PyBuffer_Release(&fb);
    if (_PyBytes_Resize(&out, m * 4) < 0) return NULL;
    return out;
}

static PyObject *claimtable_has_old(ClaimTable *t, PyObject *arg)
{
    uint64_t fp;
    if (claim_fp_arg(arg, &fp) < 0) return NULL;
    return PyBool_FromLong(claim_min(t, fp) == 0);
}

static PyObject *claimtable_load(ClaimTable *t, PyObject *unused)
{
    ClaimHead *h = CLAIM_HEAD(t);
    return Py_BuildValue("(LK)", (long long)__atomic_load_n(&h->used, __ATOMIC_RELAXED) +
                         (long long)h->zero_used, (unsigned long long)(h->mask + 1));
}

static PyMethodDef claimtable_methods[] = {
    {"rehash", (PyCFunction)(void (*)(void))claimtable_rehash, METH_FASTCALL,
     "rehash(capacity, part, parts): one part of the table copied into the other half (parts at once)."},
    {"switch", (PyCFunction)claimtable_switch, METH_O, "switch(capacity): the table moves to the other half."},
    {"add_old", (PyCFunction)claimtable_add_old, METH_O, "add_old(packed uint64 fingerprints)."},
    {"fill", (PyCFunction)claimtable_fill, METH_O, "fill(FingerprintSet)."},
    {"owned", (PyCFunction)(void (*)(void))claimtable_owned, METH_FASTCALL,
     "owned(keys, fps, limit) -> packed uint32 indices of the entries that hold the smallest key."},
    {"has_old", (PyCFunction)claimtable_has_old, METH_O, "An earlier level's fingerprint?"},
    {"load", (PyCFunction)claimtable_load, METH_NOARGS, "(slots used, capacity)."},
    {NULL}
};

static PyTypeObject ClaimTableType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "checker.search._native.ClaimTable",
    .tp_basicsize = sizeof(ClaimTable),
    .tp_dealloc = (destructor)claimtable_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The auto engine's seen set in memory shared by its workers: (fingerprint, first key).",
    .tp_methods = claimtable_methods,
    .tp_new = claimtable_new,
};

/* ---- Claims: one worker's view ---- */

typedef struct {
    PyObject_HEAD
    ClaimTable *table;
    uint64_t offset;   /* the level's index of the chunk's first state */
    uint64_t base;     /* parent index << 24 */
    uint64_t ord;      /* successors looked up so far for this parent */
    uint64_t cur;      /* the key of the last look-up */
    uint64_t *keys;    /* the keys claimed, in order */
    Py_ssize_t n, cap;
} Claims;

static PyTypeObject ClaimsType;

static PyObject *claims_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    PyObject *table;
    if (!PyArg_ParseTuple(args, "O!", &ClaimTableType, &table)) return NULL;
    Claims *c = (Claims *)type->tp_alloc(type, 0);
    if (!c) return NULL;
    Py_INCREF(table);
    c->table = (ClaimTable *)table;
    return (PyObject *)c;
}

static void claims_dealloc(Claims *c)
{
    Py_XDECREF(c->table);
    PyMem_Free(c->keys);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *claims_begin(Claims *c, PyObject *arg)
{
    unsigned long long p = PyLong_AsUnsignedLongLong(arg);
    if (p == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    p += c->offset;
    if (p >= ((uint64_t)1 << 40) - 1) {
        PyErr_SetString(PyExc_OverflowError, "a level of more than 2**40 states");
        return NULL;
    }
    c->base = (uint64_t)p << 24;
    c->ord = 0;
    Py_RETURN_NONE;
}

/* the current parent's next successor's key (c->cur); 0: error set */
static uint64_t claims_next_key(Claims *c)
{
    if (c->ord >= ((uint64_t)1 << 24)) {
        PyErr_SetString(PyExc_OverflowError, "a state with more than 2**24 successors");
        return 0;
    }
    c->cur = (c->base | c->ord) + 1;
    c->ord++;
    return c->cur;
}

/* c->cur appended to the keys claimed; -1: no memory */
static int claims_record(Claims *c)
{
    if (c->n == c->cap) {
        Py_ssize_t cap = c->cap ? c->cap * 2 : 4096;
        uint64_t *k = PyMem_Realloc(c->keys, cap * sizeof(uint64_t));
        if (!k) { PyErr_NoMemory(); return -1; }
        c->keys = k;
        c->cap = cap;
    }
    c->keys[c->n++] = c->cur;
    return 0;
}

/* successor()'s `fp in claims` then `claims.add(fp)` in one probe of the
 * table: 1 claimed (under the next key), 0 seen (an older level's or found
 * earlier in BFS order), -1 error */
static int claims_claim(Claims *c, uint64_t fp)
{
    uint64_t key = claims_next_key(c);
    if (!key) return -1;
    int claimed = claim_insert(c->table, fp, key);
    if (claimed <= 0) return claimed;
    return claims_record(c) < 0 ? -1 : 1;
}

static int claims_contains(Claims *c, PyObject *o)
{
    uint64_t fp;
    if (claim_fp_arg(o, &fp) < 0) return -1;
    uint64_t key = claims_next_key(c);
    if (!key) return -1;
    return claim_min(c->table, fp) < key;
}

static PyObject *claims_add(Claims *c, PyObject *o)
{
    uint64_t fp;
    if (claim_fp_arg(o, &fp) < 0) return NULL;
    if (claim_insert(c->table, fp, c->cur) < 0 || claims_record(c) < 0) return NULL;
    Py_RETURN_NONE;
}

/* at(start): the chunk whose successors follow begins at the level's state `start` */
static PyObject *claims_at(Claims *c, PyObject *arg)
{
    unsigned long long p = PyLong_AsUnsignedLongLong(arg);
    if (p == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    c->offset = p;
    c->base = (uint64_t)p << 24;
    c->ord = 0;
    Py_RETURN_NONE;
}

/* take_keys() -> the keys claimed since the last call (packed uint64) */
static PyObject *claims_take_keys(Claims *c, PyObject *unused)
{
    PyObject *r = PyBytes_FromStringAndSize((const char *)c->keys, c->n * 8);
    c->n = 0;
    return r;
}

/* position() -> the key the next successor of the current parent gets */
static PyObject *claims_position(Claims *c, PyObject *unused)
{
    return PyLong_FromUnsignedLongLong((c->base | c->ord) + 1);
}

static PyMethodDef claims_methods[] = {
    {"at", (PyCFunction)claims_at, METH_O, "at(start): a chunk from the level's state `start` follows."},
    {"begin", (PyCFunction)claims_begin, METH_O, "begin(i): the successors of the chunk's state i follow."},
    {"add", (PyCFunction)claims_add, METH_O, "Claim a fingerprint under the last look-up's key."},
    {"take_keys", (PyCFunction)claims_take_keys, METH_NOARGS, "The keys claimed so far (packed uint64)."},
    {"position", (PyCFunction)claims_position, METH_NOARGS, "The next successor's key."},
    {NULL}
};

static PySequenceMethods claims_as_seq = {
    .sq_contains = (objobjproc)claims_contains,
};

static PyTypeObject ClaimsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "checker.search._native.Claims",
    .tp_basicsize = sizeof(Claims),
    .tp_dealloc = (destructor)claims_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A worker's view of a ClaimTable: the `seen` of successor().",
    .tp_methods = claims_methods,
    .tp_as_sequence = &claims_as_seq,
    .tp_new = claims_new,
};

static int add_claims(PyObject *m)
{
    if (PyType_Ready(&ClaimTableType) < 0 || PyType_Ready(&ClaimsType) < 0) return -1;
    ClaimTableFull = PyErr_NewException("checker.search._native.ClaimTableFull", PyExc_MemoryError, NULL);
    if (!ClaimTableFull) return -1;
    Py_INCREF(&ClaimTableType);
    Py_INCREF(&ClaimsType);
    if (PyModule_AddObject(m, "ClaimTable", (PyObject *)&ClaimTableType) < 0 ||
        PyModule_AddObject(m, "Claims", (PyObject *)&ClaimsType) < 0 ||
        PyModule_AddObject(m, "ClaimTableFull", ClaimTableFull) < 0) return -1;
    return 0;
}
