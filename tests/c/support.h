/* Shared by the C vector runners: reading a vectors file, the AIC_VECTOR filter, and the count
 * every runner prints. Static inline: each test is one translation unit. */
#ifndef AIC_TEST_SUPPORT_H
#define AIC_TEST_SUPPORT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file, NUL-terminated (free with free()); exits 2 when it cannot be read. */
static inline char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) { fprintf(stderr, "read %s\n", path); exit(2); }
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* AIC_VECTOR=<substring>: only the cases whose id (or name) contains it run; NULL when unset
 * or empty (every case runs). */
static inline const char *vector_filter(void) {
    const char *part = getenv("AIC_VECTOR");
    return part && *part ? part : NULL;
}

/* Whether the case with this id (or name) runs. */
static inline int vector_selected(const char *id) {
    const char *part = vector_filter();
    return !part || (id && strstr(id, part));
}

/* Prints "file: N cases, E executed, S skipped[, F filtered (AIC_VECTOR=...)]"; returns 1 when
 * every case was executed, skipped or filtered (and none filtered without a filter). */
static inline int vector_counts(const char *file, int total, int executed, int skipped, int filtered) {
    const char *part = vector_filter();
    if (part) printf("%s: %d cases, %d executed, %d skipped, %d filtered (AIC_VECTOR=%s)\n", file, total, executed, skipped, filtered, part);
    else printf("%s: %d cases, %d executed, %d skipped\n", file, total, executed, skipped);
    if (part && filtered == total) printf("  AIC_VECTOR matches no case of %s\n", file);
    if (executed + skipped + filtered != total || (!part && filtered)) {
        fprintf(stderr, "FAIL %s: some case was neither executed, skipped nor filtered\n", file);
        return 0;
    }
    return 1;
}

#endif
