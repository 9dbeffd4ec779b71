/* Files read into the compiler's memory: whole (pool memory), or mapped
 * (external data of large models) until pool_release. Core: the loader
 * reads models, --bind files and external data through it. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE   /* madvise, MADV_PAGEOUT (file_pages_done) */
#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* Reads a whole file into pool memory. */
uint8_t *file_read(const char *path, size_t *len, const char *what)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_plain("cannot open %s '%s': %s", what, path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        int dir = S_ISDIR(st.st_mode);
        fclose(f);
        fail_plain("cannot read %s '%s': %s", what, path, dir ? "it is a directory" : "not a regular file");
    }
    if (fseek(f, 0, SEEK_END) != 0) { fclose(f); fail_plain("cannot read %s '%s' (not a regular file?)", what, path); }
    long n = ftell(f);
    if (n < 0) { fclose(f); fail_plain("cannot read %s '%s' (not a regular file?)", what, path); }
    rewind(f);
    uint8_t *buf = xalloc((size_t)n + 1);
    if (n && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        fail_plain("cannot read %s '%s': %s", what, path, strerror(errno));
    }
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* The mapped external data files' spans (file_pages_done). */
static struct { const uint8_t *p; size_t n; } maps[64];
static int nmaps;

/* pool_release (diag.c): the tensors pointing into the mappings are gone */
void files_unmap_all(void)
{
    for (int i = 0; i < nmaps; i++) munmap((void *)(uintptr_t)maps[i].p, maps[i].n);
    nmaps = 0;
}

/* An external data file, mapped (not read): a model's weights of several GB
 * are not copied into memory; the pages are the page cache's, read when a
 * tensor's bytes are used. Private and writable: a pass that changed a
 * constant's bytes in place would change its own copy of the page, never the
 * file. Mapped until pool_release (the tensors point into it). A file that
 * cannot be mapped (or past 64 mappings) is read whole. */
uint8_t *file_map(const char *path, size_t *len, const char *what)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) fail_plain("cannot open %s '%s': %s", what, path, strerror(errno));
    struct stat st;
    if (nmaps == 64 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (uint64_t)st.st_size > SIZE_MAX / 2) {
        close(fd);
        return file_read(path, len, what);   /* its messages for a folder, an empty file, ... */
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return file_read(path, len, what);
    *len = (size_t)st.st_size;
    maps[nmaps].p = p;
    maps[nmaps++].n = *len;
    return p;
}

/* Bytes [p, p+n) of a constant were copied into a new form (e.g. MatMul's
 * packed panels): if they lie in a mapped external data file, their pages
 * are handed back now (MADV_PAGEOUT: the contents stay as they are, read
 * from the file again if used), so a model's weights are not held twice. A
 * hint only: nothing for memory of the pool. */
void file_pages_done(const void *p, size_t n)
{
#ifdef MADV_PAGEOUT
    const uint8_t *b = p;
    long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0) return;
    for (int i = 0; i < nmaps; i++) {
        if (b < maps[i].p || b + n > maps[i].p + maps[i].n) continue;
        uintptr_t lo = ((uintptr_t)b + (uintptr_t)pg - 1) / (uintptr_t)pg * (uintptr_t)pg;
        uintptr_t hi = ((uintptr_t)b + n) / (uintptr_t)pg * (uintptr_t)pg;
        if (hi > lo) (void)madvise((void *)lo, hi - lo, MADV_PAGEOUT);
        return;
    }
#else
    (void)p;
    (void)n;
#endif
}
