/* numpy .npz: a zip archive of KEY.npy members (np.savez: stored; np.savez_compressed:
 * deflated; both zip64 and possibly with data descriptors) read through minizip, one member
 * streamed at a time. The member's bytes go through the npy header parser (npy.c).
 *
 * minizip checks a member's CRC only in unzCloseCurrentFile, and only when every byte was
 * read: so the read that ends the array drains the member and closes it, and a mismatch is an
 * error there, never short or silently wrong data. */
#include "engine/volume/vol_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unzip.h>

typedef struct npz_src {
    unzFile zf;
    int open;               /* a member is open (unzCloseCurrentFile still due) */
    uint64_t size, pos;     /* the member's uncompressed size (central directory), bytes read */
} npz_src;

static cs_status zip_error(cs_vol *v, int rc, cs_error *err)
{
    char where[1200];
    cs_vol_where(v, where, sizeof where);
    if (rc == UNZ_CRCERROR) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: bad CRC (corrupt archive)", where);
    if (rc == UNZ_ERRNO) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", where, strerror(errno));
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s: corrupt deflate data (zip error %d)", where, rc);
}

/* Only stored and deflated members are read (what np.savez and np.savez_compressed write).
 * minizip would pass a bzip2 member's compressed bytes on as if stored (the npy parser then
 * says "bad magic") and call others a zip error: the method is named here instead. */
static cs_status bad_method(cs_vol *v, unsigned long method, cs_error *err)
{
    static const struct { unsigned long code; const char *name; } known[] = {
        {9, "deflate64"}, {12, "bzip2"}, {14, "lzma"}, {93, "zstd"}, {95, "xz"}, {98, "ppmd"},
    };
    const char *name = "an unknown method";
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].code == method) name = known[i].name;
    char where[1200];
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s: compressed with %s (zip method %lu); calscope reads only "
                        "stored or deflated members (np.savez, np.savez_compressed)",
                        cs_vol_where(v, where, sizeof where), name, method);
}

static cs_status zread(cs_vol *v, void *dst, size_t n, size_t *got, int last, cs_error *err)
{
    npz_src *s = v->impl;
    size_t have = 0;
    while (have < n) {
        size_t want = n - have;
        if (want > CSV_CHUNK_BYTES) want = CSV_CHUNK_BYTES;
        int k = unzReadCurrentFile(s->zf, (char *)dst + have, (unsigned)want);
        if (k < 0) return zip_error(v, k, err);
        if (k == 0) break;
        have += (size_t)k;
    }
    s->pos += have;
    /* a deflate stream that ends before the member's recorded size is damaged, not short */
    if (have < n && s->pos < s->size) {
        char where[1200];
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: corrupt deflate data (stream ends at byte %llu of %llu)",
                            cs_vol_where(v, where, sizeof where), (unsigned long long)s->pos,
                            (unsigned long long)s->size);
    }
    *got = have;
    if (last && have == n) {
        unsigned char probe[64];
        int k;
        while ((k = unzReadCurrentFile(s->zf, probe, sizeof probe)) > 0) {}
        if (k < 0) return zip_error(v, k, err);
        s->open = 0;
        int rc = unzCloseCurrentFile(s->zf);
        if (rc != UNZ_OK) return zip_error(v, rc, err);
    }
    return CS_OK;
}

static void zclose(void *impl)
{
    npz_src *s = impl;
    if (s->open) unzCloseCurrentFile(s->zf);
    if (s->zf) unzClose(s->zf);
    free(s);
}

static const cs_vol_ops npz_ops = {zread, zclose};

/* "a.npy, b.npy" (at most ~400 bytes of names) into buf. */
static void list_members(unzFile zf, char *buf, size_t cap)
{
    size_t o = 0;
    buf[0] = '\0';
    int rc = unzGoToFirstFile(zf);
    for (int i = 0; rc == UNZ_OK; i++, rc = unzGoToNextFile(zf)) {
        char name[256];
        unz_file_info64 fi;
        if (unzGetCurrentFileInfo64(zf, &fi, name, sizeof name, NULL, 0, NULL, 0) != UNZ_OK) break;
        if (o + strlen(name) + 8 > cap || o > 400) { snprintf(buf + o, cap - o, ", ..."); return; }
        o += (size_t)snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", name);
    }
}

static int has_member(unzFile zf, const char *name)
{
    return unzLocateFile(zf, name, 1) == UNZ_OK;
}

/* The member to read: `key`.npy; with no key the only member, else probabilities.npy, else
 * softmax.npy (nnU-Net v2 / v1). */
static cs_status choose(cs_vol *v, unzFile zf, const char *key, char *name, size_t cap, cs_error *err)
{
    char members[512];
    unz_global_info64 gi;
    if (unzGetGlobalInfo64(zf, &gi) != UNZ_OK)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: corrupt zip archive", v->path);
    if (key) {
        snprintf(name, cap, "%s.npy", key);
        if (has_member(zf, name)) return CS_OK;
        list_members(zf, members, sizeof members);
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: no member '%s' (members: %s)", v->path, name,
                            gi.number_entry ? members : "none");
    }
    if (gi.number_entry == 0)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: empty archive (no arrays)", v->path);
    if (gi.number_entry == 1) {
        unz_file_info64 fi;
        if (unzGoToFirstFile(zf) != UNZ_OK ||
            unzGetCurrentFileInfo64(zf, &fi, name, (uLong)cap, NULL, 0, NULL, 0) != UNZ_OK)
            return cs_error_set(err, CS_EINPUT, 0, 0, "%s: corrupt zip archive", v->path);
        return CS_OK;
    }
    static const char *const known[] = {"probabilities.npy", "softmax.npy"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(name, cap, "%s", known[i]);
        if (has_member(zf, name)) return CS_OK;
    }
    list_members(zf, members, sizeof members);
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s: %llu arrays and none is 'probabilities' or 'softmax': "
                        "name one (members: %s)", v->path, (unsigned long long)gi.number_entry, members);
}

cs_status cs_vol_open_npz(cs_vol *v, const char *key, cs_error *err)
{
    v->info.format = CS_VOL_NPZ;
    FILE *f = fopen(v->path, "rb");
    if (!f) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot open: %s", v->path, strerror(errno));
    unsigned char magic[4];
    size_t k = fread(magic, 1, 4, f);
    int ioerr = ferror(f);
    fclose(f);
    if (ioerr) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", v->path, strerror(EIO));
    if (k < 4 || memcmp(magic, "PK", 2) != 0 || !((magic[2] == 3 && magic[3] == 4) || (magic[2] == 5 && magic[3] == 6)))
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: not an npz file (bad magic)", v->path);

    npz_src *s = calloc(1, sizeof *s);
    if (!s) return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", v->path);
    v->ops = &npz_ops;
    v->impl = s;
    /* the central directory is at the end: an archive cut short has none */
    if (!(s->zf = unzOpen64(v->path)))
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: truncated or corrupt zip archive (no central directory)", v->path);
    char name[256];
    cs_status st = choose(v, s->zf, key, name, sizeof name, err);
    if (st != CS_OK) return st;
    if (!(v->member = strdup(name))) return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", v->path);
    unz_file_info64 fi;
    int rc = unzGetCurrentFileInfo64(s->zf, &fi, NULL, 0, NULL, 0, NULL, 0);
    if (rc != UNZ_OK) return zip_error(v, rc, err);
    s->size = fi.uncompressed_size;
    if (fi.compression_method != 0 && fi.compression_method != Z_DEFLATED) return bad_method(v, fi.compression_method, err);
    rc = unzOpenCurrentFile(s->zf);
    if (rc != UNZ_OK) return zip_error(v, rc, err);
    s->open = 1;
    return cs_vol_npy_header(v, err);
}
