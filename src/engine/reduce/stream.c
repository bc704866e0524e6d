/* The values of one case in the order the reduction takes them (reduce_internal.h): the label
 * map's V values, then the C probability channels' V values each, in slabs of at most `slab`
 * values (CS_REDUCE_SLAB but in tests: rd_slab) that never cross a channel.
 *
 * Two stages per slab: the consumer's (rd_stream_next hands the slab out), then, once the
 * consumer has asked for the next slab or closed the stream with finish set, the `after` stage
 * on the same slab. Slabs go through both stages in stream order, one at a time per stage.
 *
 * Read on the caller's thread, or by a helper thread (RD_RING slots): the helper inflates
 * (ISA-L's inflate, engine/gz) the slabs ahead of the consumer and hands them over as stored
 * (rd_values: the consumer and the after stage make their doubles in their own cache). The
 * `after` stage of a slab given back runs on whichever thread would otherwise wait: the
 * helper's when no slot is free to read into, the consumer's when no slab is ready for it — so
 * the per-voxel work splits itself between the two threads whichever is the slower, inflating
 * or binning (one after stage at a time, `after_busy`, in ring order). A slot goes free ->
 * filled -> held -> returned -> free, and filling, taking and the after stage each walk the
 * ring in the same cyclic order.
 * The budget (budget.c) gives a case a helper when fewer cases than threads are in flight, so
 * --threads 2 keeps both cores busy while only one BraTS-size case holds its per-voxel state.
 * Either way the same values arrive in the same slabs and each stage sees them in the same
 * order, so nothing else depends on which. The helper owns both readers from rd_stream_open to
 * rd_stream_close; the after stage's state belongs to the thread running it, handed over under
 * the lock. */
#include "engine/reduce/reduce_internal.h"

#include "calscope/thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* The slab size tests set (0: CS_REDUCE_SLAB); atomic, though set only while no case runs. */
static atomic_size_t test_slab;

size_t rd_slab(void)
{
    size_t n = atomic_load_explicit(&test_slab, memory_order_relaxed);
    return n ? n : CS_REDUCE_SLAB;
}

void rd_slab_set(size_t values)
{
    atomic_store_explicit(&test_slab, values, memory_order_relaxed);
}

size_t rd_slab_value_bytes(const cs_vol *lv, const cs_vol *pv, int after)
{
    size_t a = cs_vol_storage_of(lv).esize, b = cs_vol_storage_of(pv).esize;
    return (a > b ? a : b) + (after ? 1 : 0);
}

typedef struct slot {
    unsigned char *stored;    /* the values as their reader stored them */
    uint8_t *aux;             /* the consumer's bytes for the after stage, one per value (in
                                 stored's block) */
    size_t n, part;           /* n values of part (0 labels, 1 + j channel j) from voxel pos */
    uint64_t pos;
    cs_status st;             /* the read's status; CS_OK when the values are there */
    cs_error err;
} slot;

struct rd_stream {
    cs_vol *lv, *pv;
    cs_vol_storage lhow, phow;   /* how each reader stores its values (any thread reads them) */
    uint64_t V;
    size_t C, slab;
    rd_after_fn after;
    void *after_arg;
    /* the next slab to read: part 0 is the labels, part 1 + j channel j; at voxel pos */
    size_t part;
    uint64_t pos;
    int threaded;
    slot ring[RD_RING];
    int held;                 /* the consumer holds a slab (ring[take]) */
    /* threaded: */
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t fill_at, take_at, after_at;   /* the next slot to fill, to hand out, to run after on */
    size_t filled, returned;  /* slots filled and not handed out; given back, after not run */
    int after_busy;           /* a thread is running the after stage of ring[after_at] */
    int stop;                 /* the consumer is done: the helper stops */
    int finish;               /* ... after the after stage of every slab given back */
    int ended;                /* the helper fills no more: everything read, or an error */
};

/* The size of the next slab and the reader it comes from; 0 when everything was read. */
static size_t next_size(const rd_stream *s, cs_vol **from)
{
    if (s->part > s->C) return 0;
    *from = s->part == 0 ? s->lv : s->pv;
    uint64_t left = s->V - s->pos;
    return left < s->slab ? (size_t)left : s->slab;
}

static void advance(rd_stream *s, size_t n)
{
    s->pos += n;
    if (s->pos == s->V) {
        s->pos = 0;
        s->part++;
    }
}

/* Reads the next slab into t (an empty case: no values, nothing to read). */
static void fill(rd_stream *s, slot *t)
{
    cs_vol *from = NULL;
    t->n = next_size(s, &from);
    t->part = s->part;
    t->pos = s->pos;
    cs_error_clear(&t->err);
    t->st = t->n ? cs_vol_read_stored(from, t->stored, t->n, &t->err) : CS_OK;
    if (t->st == CS_OK) advance(s, t->n);
}

static rd_values values_of(const rd_stream *s, const slot *t)
{
    return (rd_values){ .stored = t->stored, .how = t->part == 0 ? &s->lhow : &s->phow, .n = t->n };
}

static void run_after(const rd_stream *s, const slot *t)
{
    rd_values v = values_of(s, t);
    if (s->after && t->n) s->after(s->after_arg, t->part, t->pos, &v, t->aux);
}

/* 1 when the oldest slab given back awaits its after stage and no thread is running one. */
static int after_ready(const rd_stream *s)
{
    return s->returned > 0 && !s->after_busy;
}

/* Runs the after stage of the oldest slab given back (after_ready), under the lock (released
 * meanwhile), so that the stages run in order and one at a time. */
static void after_oldest(rd_stream *s)
{
    slot *t = &s->ring[s->after_at];
    s->after_busy = 1;
    pthread_mutex_unlock(&s->mu);
    run_after(s, t);
    pthread_mutex_lock(&s->mu);
    s->after_busy = 0;
    s->after_at = (s->after_at + 1) % RD_RING;
    s->returned--;
    pthread_cond_broadcast(&s->cv);
}

/* One step of the helper, under the lock: 1 when it did one (fill or after), 0 when it must
 * wait. It reads whenever a slot is free, and runs an after stage when none is. */
static int helper_step(rd_stream *s)
{
    cs_vol *from;
    int can_fill = !s->stop && !s->ended && s->filled + s->returned + (size_t)s->held < RD_RING;
    if (can_fill && !next_size(s, &from)) {
        s->ended = 1;
        pthread_cond_broadcast(&s->cv);
        can_fill = 0;
    }
    if (can_fill) {
        slot *t = &s->ring[s->fill_at];
        pthread_mutex_unlock(&s->mu);
        fill(s, t);            /* only this thread touches the readers and the position */
        pthread_mutex_lock(&s->mu);
        s->fill_at = (s->fill_at + 1) % RD_RING;
        s->filled++;
        if (t->st != CS_OK) s->ended = 1;
        pthread_cond_broadcast(&s->cv);
        return 1;
    }
    if (after_ready(s) && (!s->stop || s->finish)) {
        after_oldest(s);
        return 1;
    }
    return 0;
}

static void *helper(void *arg)
{
    rd_stream *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (helper_step(s)) continue;
        if (s->stop) break;    /* and, when finishing, every slab given back has had its after */
        pthread_cond_wait(&s->cv, &s->mu);
    }
    s->ended = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

cs_status rd_stream_open(cs_vol *lv, cs_vol *pv, uint64_t V, size_t C, size_t slab, int threaded,
                         rd_after_fn after, void *after_arg, rd_stream **out, cs_error *err)
{
    *out = NULL;
    rd_stream *s = calloc(1, sizeof *s);
    if (!s) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    *s = (rd_stream){ .lv = lv, .pv = pv, .lhow = cs_vol_storage_of(lv), .phow = cs_vol_storage_of(pv), .V = V,
                      .C = C, .slab = slab ? slab : 1, .after = after, .after_arg = after_arg };
    size_t cap = V < s->slab ? (size_t)(V ? V : 1) : s->slab;
    for (int i = 0; i < (threaded ? RD_RING : 1); i++)
    {   /* stored values and y bytes in one block: above the mmap threshold the reduce command sets
         * (reduce_cmd.c), so that it is given back when freed */
        size_t stored = cap * rd_slab_value_bytes(lv, pv, 0);
        if (!(s->ring[i].stored = malloc(stored + (after ? cap : 0)))) {
            rd_stream_close(s, 0);
            return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
        }
        s->ring[i].aux = after ? s->ring[i].stored + stored : NULL;
    }
    if (threaded && V && pthread_mutex_init(&s->mu, NULL) == 0) {
        if (pthread_cond_init(&s->cv, NULL) == 0) {
            /* never takes SIGINT/SIGWINCH meant for the UI thread (calscope/thread.h) */
            s->threaded = cs_helper_start(&s->tid, helper, s);
            if (!s->threaded) pthread_cond_destroy(&s->cv);
        }
        if (!s->threaded) pthread_mutex_destroy(&s->mu);   /* no thread: read here */
    }
    *out = s;
    return CS_OK;
}

/* The threaded consumer's side of rd_stream_next: gives the held slab back and takes the next. */
static slot *take_next(rd_stream *s)
{
    pthread_mutex_lock(&s->mu);
    if (s->held) {            /* the slab handed out last time goes to the after stage */
        s->held = 0;
        s->returned++;
        s->take_at = (s->take_at + 1) % RD_RING;
        pthread_cond_broadcast(&s->cv);
    }
    while (!s->filled && !s->ended) {   /* nothing to take yet: score a slab meanwhile */
        if (after_ready(s)) after_oldest(s);
        else pthread_cond_wait(&s->cv, &s->mu);
    }
    slot *t = NULL;
    if (s->filled) {
        t = &s->ring[s->take_at];
        s->filled--;
        s->held = 1;
    }
    pthread_mutex_unlock(&s->mu);
    return t;
}

cs_status rd_stream_next(rd_stream *s, size_t n, rd_values *vals, uint8_t **aux, cs_error *err)
{
    slot *t;
    if (!s->threaded) {
        t = &s->ring[0];
        if (s->held) run_after(s, t);
        s->held = 1;
        fill(s, t);
    } else if (!(t = take_next(s))) {   /* cannot happen: the caller asks for no more than there is */
        return cs_error_set(err, CS_EINPUT, 0, 0, "internal error: read past the case");
    }
    if (t->st != CS_OK) {
        *err = t->err;
        return t->st;
    }
    if (t->n != n) return cs_error_set(err, CS_EINPUT, 0, 0, "internal error: slab of %zu values, %zu expected", t->n, n);
    *vals = values_of(s, t);
    if (aux) *aux = t->aux;
    return CS_OK;
}

void rd_stream_close(rd_stream *s, int finish)
{
    if (!s) return;
    if (s->threaded) {
        pthread_mutex_lock(&s->mu);
        if (finish && s->held) {
            s->held = 0;
            s->returned++;
        }
        s->finish = finish;
        s->stop = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->tid, NULL);
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
    } else if (finish && s->held) {
        run_after(s, &s->ring[0]);
    }
    for (int i = 0; i < RD_RING; i++) free(s->ring[i].stored);
    free(s);
}
