/* The values of one case in the order the reduction takes them (reduce_internal.h): the label
 * map's V values, then the C probability channels' V values each, in slabs of at most
 * CS_REDUCE_SLAB that never cross a channel.
 *
 * Read on the caller's thread, or by a helper thread a slab ahead (RING slabs, double
 * buffering): decompressing (ISA-L's inflate, engine/gz) then runs
 * beside the sums. The budget (budget.c) gives a case a helper when fewer cases than threads
 * are in flight, so --threads 2 keeps both cores busy while only one BraTS-size case holds its
 * per-voxel state. Either way the same values arrive in the same slabs, so nothing else
 * depends on which. The helper owns both readers from rd_stream_open to rd_stream_close. */
#include "engine/reduce/reduce_internal.h"

#include "calscope/thread.h"

#include <pthread.h>
#include <stdlib.h>

#define RING 2

typedef struct slot {
    double *vals;
    size_t n;
    cs_status st;             /* the read's status; CS_OK when the values are there */
    cs_error err;
} slot;

struct rd_stream {
    cs_vol *lv, *pv;
    uint64_t V;
    size_t C;
    /* the next slab to read: part 0 is the labels, part 1 + j channel j; at voxel pos */
    size_t part;
    uint64_t pos;
    int threaded;
    slot ring[RING];
    /* threaded: slots [head, head + filled) hold read slabs; the consumer uses ring[head] until
     * its next call */
    pthread_t tid;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t head, filled;
    int held;                 /* the consumer holds ring[head] */
    int stop;                 /* the consumer is done: the helper stops */
    int ended;                /* the helper has read everything or met an error */
};

/* The size of the next slab and the reader it comes from; 0 when everything was read. */
static size_t next_size(const rd_stream *s, cs_vol **from)
{
    if (s->part > s->C) return 0;
    *from = s->part == 0 ? s->lv : s->pv;
    uint64_t left = s->V - s->pos;
    return left < CS_REDUCE_SLAB ? (size_t)left : CS_REDUCE_SLAB;
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
    cs_error_clear(&t->err);
    t->st = t->n ? cs_vol_read(from, t->vals, t->n, &t->err) : CS_OK;
    if (t->st == CS_OK) advance(s, t->n);
}

static void *helper(void *arg)
{
    rd_stream *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && s->filled + (size_t)s->held >= RING) pthread_cond_wait(&s->cv, &s->mu);
        cs_vol *from;
        if (s->stop || !next_size(s, &from)) break;
        slot *t = &s->ring[(s->head + s->filled + (size_t)s->held) % RING];
        pthread_mutex_unlock(&s->mu);
        fill(s, t);            /* only this thread touches the readers and the position */
        pthread_mutex_lock(&s->mu);
        s->filled++;
        pthread_cond_broadcast(&s->cv);
        if (t->st != CS_OK) break;
    }
    s->ended = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

cs_status rd_stream_open(cs_vol *lv, cs_vol *pv, uint64_t V, size_t C, int threaded, rd_stream **out,
                         cs_error *err)
{
    *out = NULL;
    rd_stream *s = calloc(1, sizeof *s);
    if (!s) return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
    *s = (rd_stream){ .lv = lv, .pv = pv, .V = V, .C = C };
    size_t cap = V < CS_REDUCE_SLAB ? (size_t)(V ? V : 1) : CS_REDUCE_SLAB;
    for (int i = 0; i < (threaded ? RING : 1); i++)
        if (!(s->ring[i].vals = malloc(cap * sizeof(double)))) {
            rd_stream_close(s);
            return cs_error_set(err, CS_ENOMEM, 0, 0, "out of memory");
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

cs_status rd_stream_next(rd_stream *s, size_t n, const double **vals, cs_error *err)
{
    slot *t;
    if (!s->threaded) {
        t = &s->ring[0];
        fill(s, t);
    } else {
        pthread_mutex_lock(&s->mu);
        if (s->held) {            /* the slab handed out last time is free again */
            s->held = 0;
            s->head = (s->head + 1) % RING;
            pthread_cond_broadcast(&s->cv);
        }
        while (!s->filled && !s->ended) pthread_cond_wait(&s->cv, &s->mu);
        if (!s->filled) {         /* cannot happen: the caller asks for no more than there is */
            pthread_mutex_unlock(&s->mu);
            return cs_error_set(err, CS_EINPUT, 0, 0, "internal error: read past the case");
        }
        t = &s->ring[s->head];
        s->filled--;
        s->held = 1;
        pthread_mutex_unlock(&s->mu);
    }
    if (t->st != CS_OK) {
        *err = t->err;
        return t->st;
    }
    if (t->n != n) return cs_error_set(err, CS_EINPUT, 0, 0, "internal error: slab of %zu values, %zu expected", t->n, n);
    *vals = t->vals;
    return CS_OK;
}

void rd_stream_close(rd_stream *s)
{
    if (!s) return;
    if (s->threaded) {
        pthread_mutex_lock(&s->mu);
        s->stop = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->tid, NULL);
        pthread_cond_destroy(&s->cv);
        pthread_mutex_destroy(&s->mu);
    }
    for (int i = 0; i < RING; i++) free(s->ring[i].vals);
    free(s);
}
