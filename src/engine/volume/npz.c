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
#include <sys/stat.h>
#include <unzip.h>

/* A deflated member is found by minizip, its compressed bytes read straight from the file
 * (where minizip says they start, as many as the central directory says) and inflated by
 * engine/gz (ISA-L, its CRC-32 computed as it goes and compared with the central directory's);
 * a stored one is read by minizip. Reading the compressed bytes through minizip instead cost a
 * BraTS-size member 0.15 s of CPU: a copy through its 16 KiB buffer, a read call for each, and a
 * CRC-32 of the compressed bytes that a raw read never checks. */
typedef struct npz_src {
    unzFile zf;
    int open;               /* a member is open (unzCloseCurrentFile still due) */
    uint64_t size, pos;     /* the member's uncompressed size (central directory), bytes read */
    cs_gz *inf;             /* a deflated member, else NULL */
    uint32_t crc_want;      /* its CRC-32 (central directory) */
    int zip_rc;             /* the error, when reading compressed bytes failed (UNZ_ERRNO) */
    FILE *deflated;         /* a deflated member: the archive, at the next compressed byte */
    uint64_t deflated_left; /* compressed bytes not read yet */
    unsigned char in[1 << 17];
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

/* The member's compressed bytes, for the inflater: 1 with some, 0 at their end (or the file's,
 * if it is shorter: the inflater then says where the stream broke off), -1 on a read error. */
static int pull_member(void *ctx, const void **p, size_t *n)
{
    npz_src *s = ctx;
    size_t want = s->deflated_left < sizeof s->in ? (size_t)s->deflated_left : sizeof s->in;
    size_t k = want ? fread(s->in, 1, want, s->deflated) : 0;
    if (k < want && ferror(s->deflated)) {
        s->zip_rc = UNZ_ERRNO;
        return -1;
    }
    s->deflated_left -= k;
    if (k < want) s->deflated_left = 0;
    *p = s->in;
    *n = k;
    return k > 0;
}

/* Opens the archive a second time at the deflated member's compressed bytes. */
static cs_status seek_deflated(cs_vol *v, npz_src *s, uint64_t compressed, cs_error *err)
{
    uint64_t at = unzGetCurrentFileZStreamPos64(s->zf);
    if (!(s->deflated = fopen(v->path, "rb")) || fseeko(s->deflated, (off_t)at, SEEK_SET) != 0)
        return zip_error(v, UNZ_ERRNO, err);
    s->deflated_left = compressed;
    return CS_OK;
}

/* Up to n inflated bytes of a deflated member into dst: 0, or a minizip error (< 0), or 1 for
 * corrupt deflate data. */
static int isal_fill(npz_src *s, unsigned char *dst, size_t n, size_t *got)
{
    const char *why;
    int rc = cs_gz_read(s->inf, dst, n, got, &why);
    return rc == -2 ? s->zip_rc : rc == -1 ? 1 : 0;
}

/* After the array's last byte: the deflate stream must end exactly at the member's size, and
 * its CRC-32 be the central directory's (minizip checks neither for a raw read). */
static cs_status isal_finish(cs_vol *v, npz_src *s, cs_error *err)
{
    unsigned char probe[64];
    size_t k = 0;
    int rc;
    while ((rc = isal_fill(s, probe, sizeof probe, &k)) == 0 && k > 0) s->pos += k;
    if (rc < 0) return zip_error(v, rc, err);
    if (rc > 0 || !cs_gz_finished(s->inf) || s->pos != s->size) {
        char where[1200];
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: corrupt deflate data (stream ends at byte %llu of %llu)",
                            cs_vol_where(v, where, sizeof where), (unsigned long long)s->pos,
                            (unsigned long long)s->size);
    }
    return cs_gz_crc(s->inf) == s->crc_want ? CS_OK : zip_error(v, UNZ_CRCERROR, err);
}

/* A stored member: minizip checks the CRC in unzCloseCurrentFile once every byte was read. */
static cs_status minizip_drain(cs_vol *v, npz_src *s, cs_error *err)
{
    unsigned char probe[64];
    int k;
    while ((k = unzReadCurrentFile(s->zf, probe, sizeof probe)) > 0) {}
    return k < 0 ? zip_error(v, k, err) : CS_OK;
}

static cs_status zread(cs_vol *v, void *dst, size_t n, size_t *got, int last, cs_error *err)
{
    npz_src *s = v->impl;
    size_t have = 0;
    while (have < n) {
        size_t want = n - have;
        if (want > CSV_CHUNK_BYTES) want = CSV_CHUNK_BYTES;
        int k;
        if (s->inf) {
            size_t g = 0;
            if ((k = isal_fill(s, (unsigned char *)dst + have, want, &g)) != 0) {
                if (k < 0) return zip_error(v, k, err);
                have += g;
                break;   /* invalid deflate data: the stream ends here (said below) */
            }
            k = (int)g;
        } else {
            k = unzReadCurrentFile(s->zf, (char *)dst + have, (unsigned)want);
        }
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
        cs_status st = s->inf ? isal_finish(v, s, err) : minizip_drain(v, s, err);
        if (st != CS_OK) return st;
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
    if (s->deflated) fclose(s->deflated);
    cs_gz_close(s->inf);
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
 * softmax.npy (nnU-Net v2 / v1). zf NULL: an empty archive. */
static cs_status choose(cs_vol *v, unzFile zf, const char *key, char *name, size_t cap, cs_error *err)
{
    char members[512];
    unz_global_info64 gi = { 0 };   /* zf NULL: an empty archive */
    if (zf && unzGetGlobalInfo64(zf, &gi) != UNZ_OK)
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: corrupt zip archive", v->path);
    if (key) {
        snprintf(name, cap, "%s.npy", key);
        if (gi.number_entry && has_member(zf, name)) return CS_OK;
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

/* The archive at path opened by minizip, or NULL: with *empty = 1 for an archive of no members
 * (np.savez with no arrays), else with err set: it cannot be opened, it is not a zip archive, or
 * it has no central directory (cut short). */
static unzFile open_archive(const char *path, int *empty, cs_error *err)
{
    *empty = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot open: %s", path, strerror(errno)), NULL;
    unsigned char head[22];
    size_t k = fread(head, 1, sizeof head, f);
    int ioerr = ferror(f);
    fclose(f);
    if (ioerr) return cs_error_set(err, CS_EINPUT, 0, 0, "%s: cannot read: %s", path, strerror(EIO)), NULL;
    if (k < 4 || memcmp(head, "PK", 2) != 0 || !((head[2] == 3 && head[3] == 4) || (head[2] == 5 && head[3] == 6)))
        return cs_error_set(err, CS_EINPUT, 0, 0, "%s: not an npz file (bad magic)", path), NULL;
    /* the central directory is at the end: an archive cut short has none */
    unzFile zf = unzOpen64(path);
    if (zf) return zf;
    /* minizip takes an end record at offset 0 for none: the whole archive is that record, and
     * says it has no entries (this disk's and the total, bytes 8-11) */
    if (k == sizeof head && head[2] == 5 && memcmp(head + 8, "\0\0\0\0", 4) == 0) {
        *empty = 1;
        return NULL;
    }
    return cs_error_set(err, CS_EINPUT, 0, 0, "%s: truncated or corrupt zip archive (no central directory)", path), NULL;
}

cs_status cs_vol_npz_find(const char *path, const char *const *keys, int n_keys, unsigned *found,
                          char *members, size_t cap, cs_error *err)
{
    *found = 0;
    if (cap) members[0] = '\0';
    int empty;
    unzFile zf = open_archive(path, &empty, err);
    if (!zf && empty) snprintf(members, cap, "none");
    if (!zf) return empty ? CS_OK : err->code;
    for (int i = 0; i < n_keys && i < 32; i++) {
        char name[256];
        snprintf(name, sizeof name, "%s.npy", keys[i]);
        if (has_member(zf, name)) *found |= 1u << i;
    }
    unz_global_info64 gi;
    if (unzGetGlobalInfo64(zf, &gi) == UNZ_OK && gi.number_entry == 0) snprintf(members, cap, "none");
    else list_members(zf, members, cap);
    unzClose(zf);
    return CS_OK;
}

cs_status cs_vol_open_npz(cs_vol *v, const char *key, cs_error *err)
{
    v->info.format = CS_VOL_NPZ;
    npz_src *s = calloc(1, sizeof *s);
    if (!s) return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", v->path);
    v->ops = &npz_ops;
    v->impl = s;
    v->checksummed = 1;   /* a member's CRC, stored or deflated */
    int empty;
    if (!(s->zf = open_archive(v->path, &empty, err)) && !empty) return err->code;
    char name[256];
    cs_status st = choose(v, s->zf, key, name, sizeof name, err);
    if (st != CS_OK) return st;
    if (!(v->member = strdup(name))) return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", v->path);
    unz_file_info64 fi;
    int rc = unzGetCurrentFileInfo64(s->zf, &fi, NULL, 0, NULL, 0, NULL, 0);
    if (rc != UNZ_OK) return zip_error(v, rc, err);
    s->size = fi.uncompressed_size;
    if (fi.compression_method != 0 && fi.compression_method != Z_DEFLATED) return bad_method(v, fi.compression_method, err);
    if (fi.compression_method == Z_DEFLATED) {
        /* raw: minizip checks the local header and finds the compressed bytes, ISA-L inflates them */
        if (!(s->inf = cs_gz_open_raw(pull_member, s)))
            return cs_error_set(err, CS_ENOMEM, 0, 0, "%s: out of memory", v->path);
        s->crc_want = (uint32_t)fi.crc;
        int method = 0, level = 0;
        rc = unzOpenCurrentFile2(s->zf, &method, &level, 1);
    } else {
        rc = unzOpenCurrentFile(s->zf);
    }
    if (rc != UNZ_OK) return zip_error(v, rc, err);
    s->open = 1;
    if (s->inf && (st = seek_deflated(v, s, fi.compressed_size, err)) != CS_OK) return st;
    if ((st = cs_vol_npy_header(v, err)) != CS_OK) return st;
    /* the member's data: its recorded size, and no more than its compressed bytes (in the
     * archive) can hold, stored or inflated */
    struct stat sb;
    uint64_t packed = fi.compressed_size;
    if (stat(v->path, &sb) == 0 && (uint64_t)sb.st_size < packed) packed = (uint64_t)sb.st_size;
    uint64_t most = s->inf ? cs_gz_most_inflated(packed) : packed;
    if (most > s->size) most = s->size;
    return cs_vol_check_fits(v, most > s->pos ? most - s->pos : 0, err);
}
